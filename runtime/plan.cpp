#include "runtime/plan.hpp"

#include "core/error.hpp"
#include "runtime/hooks.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace kjit {

namespace {
/// One pointer per argument at `offsets` into `bytes`, in `out` (reused).
void** argument_pointers(std::byte* bytes, const std::vector<std::size_t>& offsets,
                         std::vector<void*>& out) {
    out.clear();
    for (const std::size_t at : offsets)
        out.push_back(bytes + at);
    return out.data();
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
    Graph g = Graph::capture(
        [&](CUstream s) {
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
                // The node this launch added: the capture's one open node now, a kernel node.
                CUstreamCaptureStatus status{};
                const CUgraphNode* deps = nullptr;
                std::size_t n = 0;
                check(driver().cuStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, nullptr,
                                                      &n),
                      "cuStreamGetCaptureInfo", where(i));
                CUgraphNodeType type{};
                if (n == 1 && deps)
                    check(driver().cuGraphNodeGetType(deps[0], &type), "cuGraphNodeGetType",
                          where(i));
                if (n != 1 || !deps || type != CU_GRAPH_NODE_TYPE_KERNEL)
                    throw LaunchError("plan", CUDA_SUCCESS, st.function.name(), where(i),
                                      "the capture has " + std::to_string(n) +
                                          " open nodes after this step, not its one kernel node "
                                          "(was other work queued on the stream?)");
                nodes.push_back(deps[0]);
            }
        },
        stream);
    graph_ = std::move(g);
    nodes_ = std::move(nodes);
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

CUdeviceptr Plan::step_block(std::size_t bytes) {
    if (bytes == 0 || bytes % 8 != 0 || bytes > kMaxStepBlock)
        throw ConfigError("a step block is a multiple of 8 bytes up to " +
                          std::to_string(kMaxStepBlock) + ", not " + std::to_string(bytes));
    if (step_block_.bytes() == 0)
        step_block_ = DeviceBuffer(bytes);
    else if (step_block_.bytes() != bytes)
        throw ConfigError("the plan's step block has " + std::to_string(step_block_.bytes()) +
                          " bytes, not " + std::to_string(bytes) +
                          " (its address is in the recorded steps)");
    return step_block_.ptr();
}

void Plan::launch(CUstream stream, std::span<const std::byte> block) const {
    if (step_block_.bytes() == 0)
        throw ConfigError("the plan has no step block (Plan::step_block)");
    if (block.size() != step_block_.bytes())
        throw ConfigError("a step block of " + std::to_string(block.size()) +
                          " bytes for the plan's " + std::to_string(step_block_.bytes()));
    if (!recorded_)
        throw ConfigError("a plan is recorded (Plan::record) before it is launched");
    // The values travel in the call as stream memory operations (64-bit writes): no host
    // buffer to keep alive, and less host time than cuMemcpyHtoDAsync of the same 64 bytes
    // (H200, bench_plan in 7 processes: 1.19 - 2.08 us against 1.50 - 2.27, lower in each).
    // A driver without them copies.
    std::array<CUstreamBatchMemOpParams, kMaxStepBlock / 8> ops; // the first `words` written
    const std::size_t words = block.size() / 8;
    for (std::size_t i = 0; i < words; ++i) {
        ops[i] = {};
        ops[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
        ops[i].writeValue.address = step_block_.ptr() + 8 * i;
        std::memcpy(&ops[i].writeValue.value64, block.data() + 8 * i, 8);
    }
    const CUresult r =
        driver().cuStreamBatchMemOp
            ? driver().cuStreamBatchMemOp(stream, static_cast<unsigned>(words), ops.data(), 0)
            : CUDA_ERROR_NOT_SUPPORTED;
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        check(driver().cuMemcpyHtoDAsync(step_block_.ptr(), block.data(), block.size(), stream),
              "cuMemcpyHtoDAsync", "the plan's step block");
    else
        check(r, "cuStreamBatchMemOp", "the plan's step block");
    launch(stream);
}

void Plan::write_node(std::size_t i, std::byte* bytes, const LaunchConfig& config) {
    // Every field the node was recorded with is known here: no read of the node first.
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = steps_[i].function.handle();
    p.gridDimX = config.grid.x;
    p.gridDimY = config.grid.y;
    p.gridDimZ = config.grid.z;
    p.blockDimX = config.block.x;
    p.blockDimY = config.block.y;
    p.blockDimZ = config.block.z;
    p.sharedMemBytes = config.smem_bytes;
    p.kernelParams = argument_pointers(bytes, steps_[i].offsets, pointers_);
    check(driver().cuGraphExecKernelNodeSetParams(graph_.exec(), nodes_[i], &p),
          "cuGraphExecKernelNodeSetParams", [&] { return where(i); });
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
