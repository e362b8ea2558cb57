#include "runtime/plan.hpp"

#include "core/error.hpp"

#include <utility>

namespace kjit {

std::vector<void*> Plan::Step::params() {
    std::vector<void*> out;
    out.reserve(offsets.size());
    for (const std::size_t at : offsets)
        out.push_back(bytes.data() + at);
    return out;
}

std::string Plan::where(std::size_t i) const {
    return "step " + std::to_string(i) + " of " + std::to_string(steps_.size()) + " (" +
           steps_[i].function.name() + ")";
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
                std::vector<void*> params = st.params();
                try { // every step checked as a launch is, its error naming the step
                    st.function.launch_packed(c, params.data(), st.sizes, st.aligns, st.signature,
                                              st.kinds);
                } catch (const LaunchError& e) {
                    throw LaunchError("plan", e.code, e.kernel, where(i), e.what());
                }
                // The node this launch added: the capture's one dependency now.
                CUstreamCaptureStatus status{};
                const CUgraphNode* deps = nullptr;
                std::size_t n = 0;
                check(driver().cuStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, nullptr,
                                                      &n),
                      "cuStreamGetCaptureInfo", where(i));
                if (n != 1 || !deps)
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
    graph_.launch(stream);
}

void Plan::update(std::size_t i, Step replacement) {
    Step& st = step(i);
    if (replacement.signature != st.signature)
        throw LaunchError("plan", CUDA_SUCCESS, st.function.name(), where(i),
                          "set_args takes the argument types the step was added with");
    if (recorded_) {
        CUDA_KERNEL_NODE_PARAMS p{};
        check(driver().cuGraphKernelNodeGetParams(nodes_[i], &p), "cuGraphKernelNodeGetParams",
              where(i));
        std::vector<void*> params = replacement.params();
        p.kernelParams = params.data();
        p.extra = nullptr;
        check(driver().cuGraphExecKernelNodeSetParams(graph_.exec(), nodes_[i], &p),
              "cuGraphExecKernelNodeSetParams", where(i));
    }
    st = std::move(replacement);
}

void Plan::set_config(std::size_t i, const LaunchConfig& config) {
    Step& st = step(i);
    const LaunchConfig& was = st.config;
    const auto refuse = [&](const std::string& why) {
        throw LaunchError("plan", CUDA_SUCCESS, st.function.name(), where(i), why);
    };
    if (config.pdl != was.pdl || config.cooperative != was.cooperative ||
        config.cluster.x != was.cluster.x || config.cluster.y != was.cluster.y ||
        config.cluster.z != was.cluster.z)
        refuse("PDL, cluster and cooperative launches are part of the recording: add the step "
               "with them and record again");
    if (config.smem_bytes > was.smem_bytes)
        refuse("more dynamic shared memory than the step was recorded with (" +
               std::to_string(config.smem_bytes) + " > " + std::to_string(was.smem_bytes) +
               " B) needs a new recording");
    if (config.grid.volume() == 0 || config.block.volume() == 0 || !st.function.fits(config))
        refuse("grid " + config.grid.str() + " block " + config.block.str() +
               " does not fit the kernel's or the device's limits");
    if (recorded_) {
        CUDA_KERNEL_NODE_PARAMS p{};
        check(driver().cuGraphKernelNodeGetParams(nodes_[i], &p), "cuGraphKernelNodeGetParams",
              where(i));
        std::vector<void*> params = st.params();
        p.kernelParams = params.data();
        p.extra = nullptr;
        p.gridDimX = config.grid.x;
        p.gridDimY = config.grid.y;
        p.gridDimZ = config.grid.z;
        p.blockDimX = config.block.x;
        p.blockDimY = config.block.y;
        p.blockDimZ = config.block.z;
        p.sharedMemBytes = config.smem_bytes;
        check(driver().cuGraphExecKernelNodeSetParams(graph_.exec(), nodes_[i], &p),
              "cuGraphExecKernelNodeSetParams", where(i));
    }
    const CUstream keep = st.config.stream;
    st.config = config;
    st.config.stream = keep;
}

} // namespace kjit
