#include "runtime/module.hpp"

#include "runtime/context.hpp"

#include <cstdio>
#include <utility>

namespace kjit {

namespace detail {
struct FunctionState {
    std::string name;
    int device_ordinal = 0;
    std::string arch;
    int max_threads = 0;
    int static_smem = 0;
    int smem_optin_max = 0;
    std::atomic<const void*> checked_signature{nullptr};
    std::atomic<unsigned> smem_opted{48 * 1024};
    std::mutex mutex; // serializes the first-launch checks and the smem opt-in
};
} // namespace detail

namespace {
constexpr unsigned kDefaultSmemLimit = 48 * 1024;

std::string sizes_text(std::span<const std::size_t> sizes) {
    std::string s;
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i ? ", " : "") + std::to_string(i) + ": " + std::to_string(sizes[i]) + " B";
    return "(" + s + ")";
}
} // namespace

std::string Dim3::str() const {
    return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

LaunchError::LaunchError(const std::string& call, CUresult code_, std::string kernel_,
                         const std::string& context, const std::string& detail)
    : Error(call + ": " + (code_ == CUDA_SUCCESS ? std::string("refused by kjit") : describe(code_)) +
            " [" + context + "]" + (detail.empty() ? "" : ": " + detail)),
      code(code_), kernel(std::move(kernel_)) {}

Function::Function(CUfunction handle, std::string name, int device_ordinal, std::string arch)
    : handle_(handle), state_(std::make_shared<detail::FunctionState>()) {
    state_->name = std::move(name);
    state_->device_ordinal = device_ordinal;
    state_->arch = std::move(arch);
    state_->max_threads = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    state_->static_smem = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    state_->smem_optin_max = Device::get(device_ordinal).attribute(
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
}

const std::string& Function::name() const { return state_->name; }

int Function::attribute(CUfunction_attribute attr) const {
    int v = 0;
    check(driver().cuFuncGetAttribute(&v, attr, handle_), "cuFuncGetAttribute",
          "kernel=" + state_->name + " attribute=" + std::to_string(attr));
    return v;
}

int Function::max_threads_per_block() const { return state_->max_threads; }

std::vector<std::size_t> Function::param_sizes() const {
    std::vector<std::size_t> sizes;
    if (!driver().cuFuncGetParamInfo)
        return sizes;
    for (std::size_t i = 0;; ++i) {
        std::size_t offset = 0, size = 0;
        const CUresult r = driver().cuFuncGetParamInfo(handle_, i, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            break;
        check(r, "cuFuncGetParamInfo", "kernel=" + state_->name);
        sizes.push_back(size);
    }
    return sizes;
}

std::string Function::context(const LaunchConfig& c) const {
    return "kernel=" + state_->name + " grid=" + c.grid.str() + " block=" + c.block.str() +
           " smem=" + std::to_string(c.smem_bytes) + " dev=" +
           std::to_string(state_->device_ordinal) + " " + state_->arch;
}

void Function::check_arguments(const LaunchConfig& config,
                               std::span<const std::size_t> sizes) const {
    if (!driver().cuFuncGetParamInfo)
        return; // a driver before 12.4 cannot describe the layout
    const std::vector<std::size_t> expected = param_sizes();
    std::string problem;
    if (expected.size() != sizes.size()) {
        problem = "the kernel takes " + std::to_string(expected.size()) + " parameters " +
                  sizes_text(expected) + " but " + std::to_string(sizes.size()) +
                  " arguments were passed " + sizes_text(sizes);
    } else {
        for (std::size_t i = 0; i < sizes.size(); ++i)
            if (sizes[i] != expected[i]) {
                problem = "argument " + std::to_string(i) + " is " + std::to_string(sizes[i]) +
                          " bytes but the kernel's parameter " + std::to_string(i) + " is " +
                          std::to_string(expected[i]) + " bytes; expected " +
                          sizes_text(expected) + ", passed " + sizes_text(sizes);
                break;
            }
    }
    if (!problem.empty())
        throw LaunchError("launch", CUDA_SUCCESS, state_->name, context(config), problem);
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
                  "cuFuncSetAttribute", context(c));
            state_->smem_opted.store(c.smem_bytes);
        }
    }
}

void Function::launch_packed(const LaunchConfig& config, void** params,
                             std::span<const std::size_t> sizes, const void* signature) const {
    if (state_->checked_signature.load(std::memory_order_acquire) != signature) {
        std::lock_guard lock(state_->mutex);
        check_arguments(config, sizes);
        state_->checked_signature.store(signature, std::memory_order_release);
    }
    check_config(config);
    const CUresult r = driver().cuLaunchKernel(
        handle_, config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y,
        config.block.z, config.smem_bytes, config.stream, params, nullptr);
    if (r != CUDA_SUCCESS)
        throw LaunchError("cuLaunchKernel", r, state_->name, context(config), {});
}

Module::Module(CUmodule m, std::string label, int device_ordinal, std::string arch)
    : module_(m), label_(std::move(label)), device_ordinal_(device_ordinal),
      arch_(std::move(arch)) {}

Module Module::load(const Context& context, const std::string& image, const std::string& label) {
    context.make_current();
    CUmodule m = nullptr;
    // PTX must be NUL-terminated (std::string is); CUBIN is read by its ELF header.
    check(driver().cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData",
          "module=" + label + " bytes=" + std::to_string(image.size()) +
              " dev=" + std::to_string(context.device().ordinal()));
    return {m, label, context.device().ordinal(), context.device().arch()};
}

Module::Module(Module&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), label_(std::move(other.label_)),
      device_ordinal_(other.device_ordinal_), arch_(std::move(other.arch_)) {}

Module& Module::operator=(Module&& other) noexcept {
    std::swap(module_, other.module_);
    std::swap(label_, other.label_);
    std::swap(device_ordinal_, other.device_ordinal_);
    std::swap(arch_, other.arch_);
    return *this;
}

Module::~Module() {
    if (module_)
        if (const CUresult r = driver().cuModuleUnload(module_); r != CUDA_SUCCESS)
            std::fprintf(stderr, "kjit: warning: cuModuleUnload(%s): %s\n", label_.c_str(),
                         describe(r).c_str());
}

std::vector<Function> Module::functions() const {
    unsigned count = 0;
    check(driver().cuModuleGetFunctionCount(&count, module_), "cuModuleGetFunctionCount",
          "module=" + label_);
    std::vector<CUfunction> handles(count);
    check(driver().cuModuleEnumerateFunctions(handles.data(), count, module_),
          "cuModuleEnumerateFunctions", "module=" + label_);
    std::vector<Function> out;
    for (CUfunction f : handles) {
        const char* name = nullptr;
        check(driver().cuFuncGetName(&name, f), "cuFuncGetName", "module=" + label_);
        // Under lazy loading (the default) enumerated handles are not loaded yet; looking
        // each up by name loads it.
        out.push_back(function(name));
    }
    return out;
}

Function Module::function(const std::string& name) const {
    CUfunction f = nullptr;
    const CUresult r = driver().cuModuleGetFunction(&f, module_, name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND)
        throw NotFoundError("module " + label_ + " has no entry point '" + name + "'");
    check(r, "cuModuleGetFunction", "module=" + label_ + " function=" + name);
    return {f, name, device_ordinal_, arch_};
}

} // namespace kjit
