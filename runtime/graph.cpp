#include "runtime/graph.hpp"

#include "core/warnings.hpp"

#include <cstdio>
#include <utility>

namespace kjit {

Graph::Graph(Graph&& other) noexcept
    : graph_(std::exchange(other.graph_, nullptr)), exec_(std::exchange(other.exec_, nullptr)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
    std::swap(graph_, other.graph_);
    std::swap(exec_, other.exec_);
    return *this;
}

Graph::~Graph() {
    if (exec_)
        if (const CUresult r = driver().cuGraphExecDestroy(exec_); r != CUDA_SUCCESS)
            warn("cuGraphExecDestroy: " + describe(r));
    if (graph_)
        if (const CUresult r = driver().cuGraphDestroy(graph_); r != CUDA_SUCCESS)
            warn("cuGraphDestroy: " + describe(r));
}

Graph Graph::capture(const std::function<void(CUstream)>& enqueue, CUstream stream) {
    Graph g;
    check(driver().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
    try {
        enqueue(stream);
    } catch (...) {
        // End the capture so the stream is usable again; the launch's error is the news.
        CUgraph partial = nullptr;
        driver().cuStreamEndCapture(stream, &partial);
        if (partial)
            driver().cuGraphDestroy(partial);
        throw;
    }
    check(driver().cuStreamEndCapture(stream, &g.graph_), "cuStreamEndCapture");
    check(driver().cuGraphInstantiateWithFlags(&g.exec_, g.graph_, 0),
          "cuGraphInstantiateWithFlags");
    return g;
}

void Graph::launch(CUstream stream) const {
    check(driver().cuGraphLaunch(exec_, stream), "cuGraphLaunch");
}

} // namespace kjit
