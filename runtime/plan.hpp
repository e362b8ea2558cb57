#pragma once
// Launch plans: a chain of checked launches recorded once into a CUDA graph and replayed as one
// (a decode step's tens of small kernels pay one graph launch, not one launch each), with
// programmatic edges where a step opts into PDL and arguments updated in place between replays.

#include "runtime/graph.hpp"
#include "runtime/launch.hpp"

#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace kjit {

class Plan {
  public:
    /// Appends a step: `f` launched with `config` (its stream is the plan's; `config.pdl`: the
    /// step may start while its predecessor finishes and must pdl_wait() before reading its
    /// output) and `args`. Returns the step's index. Checked as Function::launch checks when
    /// the plan is recorded.
    template <class... Args>
    std::size_t add(const Function& f, const LaunchConfig& config, const Args&... args) {
        Step s{f, config, {}, {}, {}, {}, {}, &detail::signature_tag<Args...>};
        (s.put(args, detail::arg_kind<Args>()), ...);
        steps_.push_back(std::move(s));
        recorded_ = false;
        return steps_.size() - 1;
    }

    /// Records every step into a graph (capturing `stream`, which must be idle of other work)
    /// and instantiates it. A refused step is a LaunchError that names it ("step 3 of 64: ...");
    /// nothing is left recorded then.
    void record(CUstream stream);

    /// Replays the recorded chain on `stream` (record() first).
    void launch(CUstream stream) const;

    /// Changes step `i`'s arguments for the replays that follow, in the recorded graph (no
    /// re-recording). The argument types must be the ones the step was added with.
    template <class... Args> void set_args(std::size_t i, const Args&... args) {
        Step s{
            step(i).function, step(i).config, {}, {}, {}, {}, {}, &detail::signature_tag<Args...>};
        (s.put(args, detail::arg_kind<Args>()), ...);
        update(i, std::move(s));
    }

    /// Changes step `i`'s grid, block and dynamic shared memory in the recorded graph; the
    /// kernel's and device's limits are checked as a launch checks them. Its other launch
    /// attributes (PDL, cluster, cooperative) are part of the recording: a change of those is
    /// a LaunchError that says to record again.
    void set_config(std::size_t i, const LaunchConfig& config);

    [[nodiscard]] std::size_t size() const { return steps_.size(); }
    [[nodiscard]] bool recorded() const { return recorded_; }
    /// The graph's kernel node of each step, in step order (after record()).
    [[nodiscard]] const std::vector<CUgraphNode>& nodes() const { return nodes_; }

  private:
    struct Step {
        Function function;
        LaunchConfig config;
        std::vector<std::byte> bytes;     ///< each argument at its own aligned offset
        std::vector<std::size_t> offsets; ///< into bytes
        std::vector<std::size_t> sizes, aligns;
        std::vector<ArgKind> kinds;
        const void* signature = nullptr; ///< the argument-type list (Function::launch_packed)

        template <class T> void put(const T& value, ArgKind kind) {
            static_assert(std::is_trivially_copyable_v<T>,
                          "kernel arguments must be trivially copyable");
            const std::size_t at = (bytes.size() + alignof(T) - 1) / alignof(T) * alignof(T);
            bytes.resize(at + sizeof(T));
            std::memcpy(bytes.data() + at, &value, sizeof(T));
            offsets.push_back(at);
            sizes.push_back(sizeof(T));
            aligns.push_back(alignof(T));
            kinds.push_back(kind);
        }
        /// One pointer per argument into `bytes` (valid while the step is unchanged).
        [[nodiscard]] std::vector<void*> params();
    };
    [[nodiscard]] Step& step(std::size_t i);
    void update(std::size_t i, Step replacement);
    /// "step I of N (kernel K)", the context of every error about a step.
    [[nodiscard]] std::string where(std::size_t i) const;

    std::vector<Step> steps_;
    Graph graph_;
    std::vector<CUgraphNode> nodes_;
    bool recorded_ = false;
};

} // namespace kjit
