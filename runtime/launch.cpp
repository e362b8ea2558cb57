#include "runtime/launch.hpp"

#include "runtime/context.hpp"
#include "runtime/hooks.hpp"
#include "runtime/stream.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

namespace kjit {

namespace detail {
/// How many (block volume, dynamic shared memory) pairs a function caches the cooperative
/// co-residency of; a function launched cooperatively with more reuses the oldest slot.
constexpr std::size_t kCoresidentSlots = 8;

struct FunctionState {
    std::string name;
    std::string variant;
    int device_ordinal = 0;
    std::string arch;
    int max_threads = 0;
    int static_smem = 0;
    int smem_optin_max = 0;
    int registers = 0;
    std::atomic<const void*> checked_signature{nullptr};
    /// Dynamic shared memory a launch may use now: the function's attribute, 48 KiB less its
    /// static shared memory until a launch opts in to more.
    std::atomic<unsigned> smem_opted{0};
    std::mutex mutex; // serializes the first-launch checks and the smem opt-in
    /// Co-resident blocks per SM for cooperative launches, a word per (block volume, dynamic
    /// shared memory): smem in bits 0-31, block volume 32-47, blocks per SM 48-62, bit 63 set
    /// when filled. Filled on first use and read lock-free.
    std::array<std::atomic<std::uint64_t>, kCoresidentSlots> coresident{};
    std::atomic<unsigned> coresident_next{0};
    std::atomic<int> sm_count{0}; ///< the device's, read on the first cooperative launch
    std::vector<ParamType> params; ///< from the compile's PTX; empty when unknown
};
} // namespace detail

namespace {

/// "(1: 8 B @0, 2: 4 B @8)": each parameter's number (from 1), size and offset.
std::string layout_text(const std::vector<std::pair<std::size_t, std::size_t>>& layout) {
    std::string s;
    for (std::size_t i = 0; i < layout.size(); ++i)
        s += (i ? ", " : "") + std::to_string(i + 1) + ": " + std::to_string(layout[i].second) +
             " B @" + std::to_string(layout[i].first);
    return "(" + s + ")";
}

/// True when an argument of kind `a` may be passed for parameter `p` (sizes checked apart).
/// PTX spells a pointer as a .u64 and the driver's pointers (CUdeviceptr) are integers, so
/// integers and pointers pass for each other; floating point passes only for floating point;
/// an aggregate parameter and a class-type argument are checked by size alone.
bool kind_fits(const ParamType& p, ArgKind a) {
    if (a == ArgKind::other || p.kind == ParamKind::bytes)
        return true;
    if (p.kind == ParamKind::floating)
        return a == ArgKind::floating;
    return a != ArgKind::floating;
}

/// Where the driver places parameters of these sizes and alignments: each at the next
/// multiple of its alignment.
std::vector<std::pair<std::size_t, std::size_t>> packed_layout(std::span<const std::size_t> sizes,
                                                               std::span<const std::size_t> aligns) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    std::size_t offset = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        offset = (offset + aligns[i] - 1) / aligns[i] * aligns[i];
        out.emplace_back(offset, sizes[i]);
        offset += sizes[i];
    }
    return out;
}
} // namespace

std::string with_article(const std::string& what) {
    const bool vowel_sound = what.starts_with('8') || what.starts_with("11-") ||
                             what.starts_with("18-") || what.starts_with("unknown");
    return (vowel_sound ? "an " : "a ") + what;
}

std::string describe_arg(ArgKind kind, std::size_t size) {
    switch (kind) {
    case ArgKind::integer:
        return std::to_string(size) + "-byte integer";
    case ArgKind::floating:
        return std::to_string(size) + "-byte float";
    case ArgKind::pointer:
        return "pointer";
    case ArgKind::other:
        break;
    }
    return std::to_string(size) + "-byte object";
}

std::string Dim3::str() const {
    return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

LaunchError::LaunchError(const std::string& call, CUresult code_, std::string kernel_,
                         const std::string& context, const std::string& detail)
    : Error(call + ": " + (code_ == CUDA_SUCCESS ? std::string("refused by kjit") : describe(code_)) +
            " [" + context + "]" + (detail.empty() ? "" : ": " + detail)),
      code(code_), kernel(std::move(kernel_)) {}

Function::Function(CUfunction handle, std::string name, int device_ordinal, std::string arch,
                   std::string variant)
    : handle_(handle), state_(std::make_shared<detail::FunctionState>()) {
    state_->name = std::move(name);
    state_->variant = std::move(variant);
    state_->registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
    state_->device_ordinal = device_ordinal;
    state_->arch = std::move(arch);
    state_->max_threads = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    state_->static_smem = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    state_->smem_opted.store(
        static_cast<unsigned>(attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)));
    state_->smem_optin_max = Device::get(device_ordinal).attribute(
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
}

const std::string& Function::name() const { return state_->name; }
const std::string& Function::variant() const { return state_->variant; }
int Function::device_ordinal() const { return state_->device_ordinal; }
int Function::registers() const { return state_->registers; }

int Function::attribute(CUfunction_attribute attr) const {
    int v = 0;
    check(driver().cuFuncGetAttribute(&v, attr, handle_), "cuFuncGetAttribute",
          [&] { return "kernel=" + state_->name + " attribute=" + std::to_string(attr); });
    return v;
}

int Function::max_threads_per_block() const { return state_->max_threads; }

bool Function::fits(const LaunchConfig& c) const {
    return c.block.volume() <= static_cast<unsigned long long>(state_->max_threads) &&
           static_cast<long long>(c.smem_bytes) + state_->static_smem <= state_->smem_optin_max;
}

std::vector<std::pair<std::size_t, std::size_t>> Function::param_layout() const {
    std::vector<std::pair<std::size_t, std::size_t>> layout;
    if (!driver().cuFuncGetParamInfo)
        return layout;
    // The driver has no parameter count: the index past the last one answers INVALID_VALUE.
    for (std::size_t i = 0;; ++i) {
        std::size_t offset = 0, size = 0;
        const CUresult r = driver().cuFuncGetParamInfo(handle_, i, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            break;
        check(r, "cuFuncGetParamInfo", [&] { return "kernel=" + state_->name; });
        layout.emplace_back(offset, size);
    }
    return layout;
}

const std::vector<ParamType>& Function::param_types() const { return state_->params; }

void Function::set_param_types(std::vector<ParamType> params) {
    std::lock_guard lock(state_->mutex);
    state_->params = std::move(params);
    state_->checked_signature.store(nullptr, std::memory_order_release);
}

void Function::check_kinds(const LaunchConfig& config, std::span<const std::size_t> sizes,
                           std::span<const ArgKind> kinds) const {
    const std::vector<ParamType>& params = state_->params;
    if (params.empty() || kinds.empty())
        return;
    if (const std::string why = param_mismatch(params, sizes, kinds); !why.empty())
        throw LaunchError("launch", CUDA_SUCCESS, state_->name, context(config), why);
}

std::string param_mismatch(std::span<const ParamType> params, std::span<const std::size_t> sizes,
                           std::span<const ArgKind> kinds) {
    if (params.size() != kinds.size())
        return "the kernel takes " + std::to_string(params.size()) + " parameters but " +
               std::to_string(kinds.size()) + " arguments were passed";
    for (std::size_t i = 0; i < params.size(); ++i) {
        const ParamType& p = params[i];
        if (kind_fits(p, kinds[i]) && sizes[i] == p.size)
            continue;
        return "argument " + std::to_string(i + 1) + " is " +
               with_article(describe_arg(kinds[i], sizes[i])) + " but the kernel's parameter " +
               std::to_string(i + 1) + (p.name.empty() ? "" : " '" + p.name + "'") + " is " +
               with_article(p.describe());
    }
    return {};
}

std::string Function::context(const LaunchConfig& c) const {
    return "kernel=" + state_->name + (state_->variant.empty() ? "" : " variant=" + state_->variant) +
           " grid=" + c.grid.str() + " block=" + c.block.str() +
           " smem=" + std::to_string(c.smem_bytes) + " dev=" +
           std::to_string(state_->device_ordinal) + " " + state_->arch;
}

void Function::check_arguments(const LaunchConfig& config, std::span<const std::size_t> sizes,
                               std::span<const std::size_t> aligns) const {
    if (!driver().cuFuncGetParamInfo)
        return; // a driver before 12.4 cannot describe the layout
    const auto expected = param_layout();
    const auto passed = packed_layout(sizes, aligns);
    std::string problem;
    if (expected.size() != passed.size()) {
        problem = "the kernel takes " + std::to_string(expected.size()) + " parameters " +
                  layout_text(expected) + " but " + std::to_string(passed.size()) +
                  " arguments were passed " + layout_text(passed);
    } else {
        for (std::size_t i = 0; i < passed.size(); ++i)
            if (passed[i] != expected[i]) {
                problem = "argument " + std::to_string(i + 1) + " is " +
                          std::to_string(passed[i].second) + " bytes at offset " +
                          std::to_string(passed[i].first) + " but the kernel's parameter " +
                          std::to_string(i + 1) + " is " + std::to_string(expected[i].second) +
                          " bytes at offset " + std::to_string(expected[i].first) + "; expected " +
                          layout_text(expected) + ", passed " + layout_text(passed);
                break;
            }
    }
    if (!problem.empty())
        throw LaunchError("launch", CUDA_SUCCESS, state_->name, context(config), problem);
}

int Function::coresident_per_sm(const LaunchConfig& c) const {
    constexpr std::uint64_t kFilled = std::uint64_t{1} << 63;
    const std::uint64_t key = c.smem_bytes | (c.block.volume() << 32);
    for (const auto& slot : state_->coresident) {
        const std::uint64_t word = slot.load(std::memory_order_acquire);
        if ((word & kFilled) && (word & 0xFFFF'FFFF'FFFF) == key)
            return static_cast<int>((word >> 48) & 0x7FFF);
    }
    int per_sm = 0;
    check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
              &per_sm, handle_, static_cast<int>(c.block.volume()), c.smem_bytes),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor", [&] { return context(c); });
    // check_config() has refused blocks over the kernel's limit (at most 1024 threads), so
    // both fit their fields; a value that did not would be queried again next time.
    if (c.block.volume() <= 0xFFFF && per_sm >= 0 && per_sm <= 0x7FFF) {
        const unsigned i = state_->coresident_next.fetch_add(1, std::memory_order_relaxed);
        state_->coresident[i % detail::kCoresidentSlots].store(
            kFilled | (static_cast<std::uint64_t>(per_sm) << 48) | key, std::memory_order_release);
    }
    return per_sm;
}

void Function::check_config(const LaunchConfig& c) const {
    const auto refuse = [&](const std::string& why) {
        throw LaunchError("launch", CUDA_SUCCESS, state_->name, context(c), why);
    };
    if (c.block.volume() == 0 || c.grid.volume() == 0)
        refuse("grid and block must be non-empty");
    if (c.block.volume() > static_cast<unsigned long long>(state_->max_threads))
        refuse("block of " + std::to_string(c.block.volume()) +
               " threads exceeds the kernel's limit of " + std::to_string(state_->max_threads) +
               " threads per block (__launch_bounds__, registers or the device maximum)");
    if (c.grid.y > 65535 || c.grid.z > 65535)
        refuse("grid.y and grid.z are limited to 65535");
    if (stream_destroyed(c.stream))
        refuse("the stream was destroyed");
    if (c.cluster.x != 0 && (c.cluster.y == 0 || c.cluster.z == 0 || c.grid.x % c.cluster.x ||
                             c.grid.y % c.cluster.y || c.grid.z % c.cluster.z))
        refuse("the grid " + c.grid.str() + " is not a whole number of clusters " +
               c.cluster.str());
    if (c.smem_bytes > state_->smem_opted.load(std::memory_order_relaxed)) {
        const long long total = static_cast<long long>(c.smem_bytes) + state_->static_smem;
        if (total > state_->smem_optin_max)
            refuse("dynamic shared memory of " + std::to_string(c.smem_bytes) + " B (+" +
                   std::to_string(state_->static_smem) + " B static) exceeds the device maximum of " +
                   std::to_string(state_->smem_optin_max) + " B per block");
        std::lock_guard lock(state_->mutex);
        if (c.smem_bytes > state_->smem_opted.load()) {
            check(driver().cuFuncSetAttribute(handle_,
                                              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              static_cast<int>(c.smem_bytes)),
                  "cuFuncSetAttribute", [&] { return context(c); });
            state_->smem_opted.store(c.smem_bytes);
        }
    }
    // After the opt-in, so occupancy is asked about the function as this launch will run it.
    if (c.cooperative) {
        const int per_sm = coresident_per_sm(c);
        int sms = state_->sm_count.load(std::memory_order_relaxed);
        if (sms == 0) {
            sms = Device::get(state_->device_ordinal).sm_count();
            state_->sm_count.store(sms, std::memory_order_relaxed);
        }
        const long long fit = static_cast<long long>(per_sm) * sms;
        if (static_cast<long long>(c.grid.volume()) > fit)
            refuse("a cooperative grid of " + std::to_string(c.grid.volume()) +
                   " blocks exceeds the " + std::to_string(fit) + " that can be co-resident (" +
                   std::to_string(per_sm) + " per SM)");
    }
}

void Function::check_packed(const LaunchConfig& config, std::span<const std::size_t> sizes,
                            std::span<const std::size_t> aligns, const void* signature,
                            std::span<const ArgKind> kinds) const {
    if (state_->checked_signature.load(std::memory_order_acquire) != signature) {
        std::lock_guard lock(state_->mutex);
        check_arguments(config, sizes, aligns);
        check_kinds(config, sizes, kinds);
        state_->checked_signature.store(signature, std::memory_order_release);
    }
    check_config(config);
}

void Function::launch_packed(const LaunchConfig& config, void** params,
                             std::span<const std::size_t> sizes,
                             std::span<const std::size_t> aligns, const void* signature,
                             std::span<const ArgKind> kinds) const {
    check_packed(config, sizes, aligns, signature, kinds);
    if (detail::launch_hooks_armed()) [[unlikely]] {
        const detail::ObserverList observers = detail::launch_enter(*this, config);
        queue(config, params);
        detail::launch_exit(observers, *this, config);
        return;
    }
    queue(config, params);
}

void Function::queue(const LaunchConfig& config, void** params) const {
    if (!config.needs_ex()) {
        const CUresult r = driver().cuLaunchKernel(
            handle_, config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y,
            config.block.z, config.smem_bytes, config.stream, params, nullptr);
        if (r != CUDA_SUCCESS)
            throw LaunchError("cuLaunchKernel", r, state_->name, context(config), {});
    } else {
        CUlaunchAttribute attrs[3] = {};
        unsigned n = 0;
        if (config.pdl) {
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attrs[n++].value.programmaticStreamSerializationAllowed = 1;
        }
        if (config.cluster.x != 0) {
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attrs[n].value.clusterDim.x = config.cluster.x;
            attrs[n].value.clusterDim.y = config.cluster.y;
            attrs[n++].value.clusterDim.z = config.cluster.z;
        }
        if (config.cooperative) {
            attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            attrs[n++].value.cooperative = 1;
        }
        CUlaunchConfig lc{};
        lc.gridDimX = config.grid.x;
        lc.gridDimY = config.grid.y;
        lc.gridDimZ = config.grid.z;
        lc.blockDimX = config.block.x;
        lc.blockDimY = config.block.y;
        lc.blockDimZ = config.block.z;
        lc.sharedMemBytes = config.smem_bytes;
        lc.hStream = config.stream;
        lc.attrs = attrs;
        lc.numAttrs = n;
        const CUresult r = driver().cuLaunchKernelEx(&lc, handle_, params, nullptr);
        if (r != CUDA_SUCCESS)
            throw LaunchError("cuLaunchKernelEx", r, state_->name, context(config), {});
    }
}

} // namespace kjit
