#pragma once

#include "runtime/driver.hpp"

#include <functional>

namespace kjit {

/// An owned CUDA graph captured from a stream, and its executable form (move-only).
class Graph {
  public:
    /// Captures what `enqueue` queues on `stream` (nothing runs) and instantiates it. When
    /// `enqueue` throws, the capture is ended and its partial graph destroyed, so the stream is
    /// usable again, and the exception propagates.
    static Graph capture(const std::function<void(CUstream)>& enqueue, CUstream stream);
    Graph() = default;
    Graph(Graph&& other) noexcept;
    Graph& operator=(Graph&& other) noexcept;
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    ~Graph();

    /// Queues one run of the whole graph on `stream`.
    void launch(CUstream stream) const;
    [[nodiscard]] CUgraph handle() const { return graph_; }
    [[nodiscard]] CUgraphExec exec() const { return exec_; }

  private:
    CUgraph graph_ = nullptr;
    CUgraphExec exec_ = nullptr;
};

} // namespace kjit
