#include "runtime/plan.hpp"

#include "core/error.hpp"
#include "jit/compiler.hpp"
#include "jit/hash.hpp"
#include "runtime/context.hpp"
#include "runtime/hooks.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace kjit {

namespace {
/// The node a launch just added to the capture on `s`: its one open node, a kernel node.
CUgraphNode open_kernel_node(CUstream s, const std::string& kernel, const std::string& where) {
    CUstreamCaptureStatus status{};
    const CUgraphNode* deps = nullptr;
    std::size_t n = 0;
    check(driver().cuStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, nullptr, &n),
          "cuStreamGetCaptureInfo", where);
    CUgraphNodeType type{};
    if (n == 1 && deps)
        check(driver().cuGraphNodeGetType(deps[0], &type), "cuGraphNodeGetType", where);
    if (n != 1 || !deps || type != CU_GRAPH_NODE_TYPE_KERNEL)
        throw LaunchError("plan", CUDA_SUCCESS, kernel, where,
                          "the capture has " + std::to_string(n) +
                              " open nodes after this launch, not its one kernel node (was "
                              "other work queued on the stream?)");
    return deps[0];
}

/// Points `node` of `exec` at `function` with `config`'s grid, block and shared memory and the
/// arguments `params`: every field the node was recorded with is known, so it is not read first.
/// `where` is the error's context, or a callable that makes it (built only on a failure).
template <class Where>
void set_kernel_node(CUgraphExec exec, CUgraphNode node, const Function& function,
                     const LaunchConfig& config, void** params, Where&& where) {
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = function.handle();
    p.gridDimX = config.grid.x;
    p.gridDimY = config.grid.y;
    p.gridDimZ = config.grid.z;
    p.blockDimX = config.block.x;
    p.blockDimY = config.block.y;
    p.blockDimZ = config.block.z;
    p.sharedMemBytes = config.smem_bytes;
    p.kernelParams = params;
    check(driver().cuGraphExecKernelNodeSetParams(exec, node, &p), "cuGraphExecKernelNodeSetParams",
          std::forward<Where>(where));
}

/// One pointer per argument at `offsets` into `bytes`, in `out` (reused).
void** argument_pointers(std::byte* bytes, const std::vector<std::size_t>& offsets,
                         std::vector<void*>& out) {
    out.clear();
    for (const std::size_t at : offsets)
        out.push_back(bytes + at);
    return out.data();
}

/// The step block's writer: its values travel as the kernel's parameter, so updating them is
/// one kernel-node update. (Written before the replay by stream memory operations instead, the
/// same 64 bytes cost 6.6 - 6.9 us of GPU time per step on the H200; bench_plan.)
constexpr const char* kWriterSource = R"(struct KjitStepBlock { unsigned long long words[256]; };
extern "C" __global__ void kjit_step_block(unsigned long long* block, KjitStepBlock values,
                                           int words) {
    for (int i = threadIdx.x; i < words; i += blockDim.x) block[i] = values.words[i];
}
)";
/// The writer's arguments for `values` written at `at`.
struct WriterArgs {
    CUdeviceptr at;
    std::array<std::uint64_t, Plan::kMaxStepBlock / 8> values{};
    int words;
    void* params[3] = {&at, &values, &words};

    WriterArgs(CUdeviceptr block, std::span<const std::byte> bytes)
        : at(block), words(static_cast<int>(bytes.size() / 8)) {
        std::memcpy(values.data(), bytes.data(), bytes.size());
    }
    WriterArgs(const WriterArgs&) = delete; // params points into the object
    WriterArgs& operator=(const WriterArgs&) = delete;
};
const LaunchConfig kWriterConfig{{1, 1, 1}, {256, 1, 1}};

/// The writer's CUBIN for `arch`, compiled once per process.
const std::string& writer_cubin(const std::string& arch) {
    static std::mutex mutex;
    static std::map<std::string, std::string> cubins;
    std::lock_guard lock(mutex);
    auto it = cubins.find(arch);
    if (it == cubins.end()) {
        SourceSet set;
        set.add({"kjit_step_block.cu", "kjit/step_block.cu", kWriterSource,
                 hash128(kWriterSource), 0});
        CompileOptions o;
        o.arch = arch;
        it = cubins.emplace(arch, compile(set, "kjit_step_block", o).cubin).first;
    }
    return it->second;
}
} // namespace

std::string Plan::where(std::size_t i) const {
    return "step " + std::to_string(i) + " of " + std::to_string(steps_.size()) + " (" +
           steps_[i].function.name() + ")";
}

void Plan::refuse(std::size_t i, const std::string& why) const {
    throw LaunchError("plan", CUDA_SUCCESS, steps_[i].function.name(), where(i), why);
}

Plan::Step& Plan::step(std::size_t i) {
    if (i >= steps_.size())
        throw ConfigError("the plan has " + std::to_string(steps_.size()) + " steps, no step " +
                          std::to_string(i));
    return steps_[i];
}

void Plan::record(CUstream stream) {
    if (steps_.empty())
        throw ConfigError("a plan needs at least one step to record");
    if (!driver().cuStreamGetCaptureInfo || !driver().cuGraphExecKernelNodeSetParams)
        throw ConfigError("launch plans need a CUDA 12.3 driver or newer (cuStreamGetCaptureInfo "
                          "with edge data)");
    recorded_ = false;
    nodes_.clear();
    std::vector<CUgraphNode> nodes;
    CUgraphNode writer_node = nullptr;
    Graph g = Graph::capture(
        [&](CUstream s) {
            if (writer_) { // the step block's writer first, with the block's last values
                WriterArgs args(step_block_.ptr(), block_values_);
                LaunchConfig c = kWriterConfig;
                c.stream = s;
                writer_->check_config(c);
                writer_->queue(c, args.params);
                writer_node = open_kernel_node(s, writer_->name(), "the plan's step block");
            }
            for (std::size_t i = 0; i < steps_.size(); ++i) {
                Step& st = steps_[i];
                LaunchConfig c = st.config;
                c.stream = s;
                try { // every step checked as a launch is, its error naming the step
                    st.function.check_packed(c, st.sizes, st.aligns, st.signature, st.kinds);
                    st.function.queue(c, argument_pointers(st.bytes.data(), st.offsets, pointers_));
                } catch (const LaunchError& e) {
                    throw LaunchError("plan", e.code, e.kernel, where(i), e.what());
                }
                nodes.push_back(open_kernel_node(s, st.function.name(), where(i)));
            }
        },
        stream);
    graph_ = std::move(g);
    nodes_ = std::move(nodes);
    writer_node_ = writer_node;
    recorded_ = true;
}

void Plan::launch(CUstream stream) const {
    if (!recorded_)
        throw ConfigError("a plan is recorded (Plan::record) before it is launched");
    if (!detail::launch_hooks_armed()) [[likely]] {
        graph_.launch(stream);
        return;
    }
    std::vector<LaunchConfig> configs;
    std::vector<PlannedLaunch> steps;
    configs.reserve(steps_.size());
    steps.reserve(steps_.size());
    for (const Step& st : steps_) {
        configs.push_back(st.config);
        configs.back().stream = stream;
        steps.push_back({&st.function, &configs.back()});
    }
    const detail::ObserverList observers = detail::plan_enter(steps);
    graph_.launch(stream);
    detail::plan_exit(observers, steps);
}

CUdeviceptr Plan::step_block(const Context& context, std::size_t bytes) {
    if (bytes == 0 || bytes % 8 != 0 || bytes > kMaxStepBlock)
        throw ConfigError("a step block is a multiple of 8 bytes up to " +
                          std::to_string(kMaxStepBlock) + ", not " + std::to_string(bytes));
    if (step_block_.bytes() == bytes)
        return step_block_.ptr();
    if (step_block_.bytes() != 0)
        throw ConfigError("the plan's step block has " + std::to_string(step_block_.bytes()) +
                          " bytes, not " + std::to_string(bytes) +
                          " (its address is in the recorded steps)");
    context.make_current();
    auto module = std::make_shared<const Module>(
        Module::load(context, writer_cubin(context.device().arch()), "kjit_step_block"));
    writer_.emplace(module->function("kjit_step_block"));
    writer_module_ = std::move(module);
    step_block_ = DeviceBuffer(bytes);
    step_block_.fill_bytes(0);
    block_values_.assign(bytes, std::byte{0});
    recorded_ = false; // the writer heads the recording
    return step_block_.ptr();
}

void Plan::write_block_node() {
    WriterArgs args(step_block_.ptr(), block_values_);
    set_kernel_node(graph_.exec(), writer_node_, *writer_, kWriterConfig, args.params,
                    std::string_view("the plan's step block"));
}

void Plan::launch(CUstream stream, std::span<const std::byte> block) {
    if (step_block_.bytes() == 0)
        throw ConfigError("the plan has no step block (Plan::step_block)");
    if (block.size() != step_block_.bytes())
        throw ConfigError("a step block of " + std::to_string(block.size()) +
                          " bytes for the plan's " + std::to_string(step_block_.bytes()));
    if (!recorded_)
        throw ConfigError("a plan is recorded (Plan::record) before it is launched");
    std::copy(block.begin(), block.end(), block_values_.begin());
    write_block_node();
    launch(stream);
}

void Plan::write_node(std::size_t i, std::byte* bytes, const LaunchConfig& config) {
    set_kernel_node(graph_.exec(), nodes_[i], steps_[i].function, config,
                    argument_pointers(bytes, steps_[i].offsets, pointers_),
                    [&] { return where(i); });
}

void Plan::commit_args(std::size_t i) {
    Step& st = steps_[i];
    if (recorded_)
        write_node(i, scratch_.data(), st.config);
    std::copy(scratch_.begin(), scratch_.end(), st.bytes.begin()); // same layout, same size
}

void Plan::set_config(std::size_t i, const LaunchConfig& config) {
    Step& st = step(i);
    const LaunchConfig& was = st.config;
    const auto refuse = [&](const std::string& why) { this->refuse(i, why); };
    if (config.pdl != was.pdl || config.cooperative != was.cooperative ||
        config.cluster.x != was.cluster.x || config.cluster.y != was.cluster.y ||
        config.cluster.z != was.cluster.z)
        refuse("PDL, cluster and cooperative launches are part of the recording: add the step "
               "with them and record again");
    if (config.smem_bytes > was.smem_bytes)
        refuse("more dynamic shared memory than the step was recorded with (" +
               std::to_string(config.smem_bytes) + " > " + std::to_string(was.smem_bytes) +
               " B) needs a new recording");
    LaunchConfig next = config;
    next.stream = st.config.stream;
    try { // as a launch is checked: limits, whole clusters, a co-resident cooperative grid
        st.function.check_config(next);
    } catch (const LaunchError& e) {
        refuse(e.what());
    }
    if (recorded_)
        write_node(i, st.bytes.data(), next);
    st.config = next;
}

} // namespace kjit
