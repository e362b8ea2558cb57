#pragma once
// Launch plans: a chain of checked launches recorded once into a CUDA graph and replayed as one
// (a decode step's tens of small kernels pay one graph launch, not one launch each), with
// programmatic edges where a step opts into PDL and arguments updated in place between replays.

#include "runtime/buffer.hpp"
#include "runtime/graph.hpp"
#include "runtime/launch.hpp"
#include "runtime/module.hpp"

#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace kjit {

class Plan {
  public:
    /// Appends a step: `f` launched with `config` (its stream is the plan's; `config.pdl`: the
    /// step may start while its predecessor finishes; its kernel must wait, pdl_wait() or
    /// pdl_chain_step() at PDL=1, before any global memory access, which kjit cannot check)
    /// and `args`. Returns the step's index. Checked as Function::launch checks when
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
    /// nothing is left recorded then. Recording reports nothing to the launch hooks: each
    /// replay reports every step (LaunchObserver::plan_enter).
    void record(CUstream stream);

    /// Replays the recorded chain on `stream` (record() first).
    void launch(CUstream stream) const;

    /// The largest step block, in bytes.
    static constexpr std::size_t kMaxStepBlock = 2048;
    /// The step block: `bytes` (a multiple of 8, up to kMaxStepBlock) of device memory in
    /// `context`, allocated once, that the plan's kernels take as an argument and read what
    /// changes from one replay to the next from (positions, lengths, which buffer of a pair).
    /// The recording starts with a small kernel that writes it from its own parameters, so a
    /// decode step updates one node, not every kernel's: launch(stream, block). Ask before
    /// record(); the address is fixed for the plan's life, and asking again with another size
    /// is a ConfigError. When the steps' buffers themselves move, set_args is the way.
    CUdeviceptr step_block(const Context& context, std::size_t bytes);
    /// Sets the block's values for this replay and the ones after it (the block writer's node
    /// updated in the graph; a replay queued before keeps the values it was queued with), then
    /// replays on `stream`. `block` has the step block's size.
    void launch(CUstream stream, std::span<const std::byte> block);

    /// Changes step `i`'s arguments for the replays that follow, in the recorded graph (no
    /// re-recording: one cuGraphExecKernelNodeSetParams; no allocation once the plan has set
    /// its largest step). The argument types must be the ones the step was added with; a
    /// refused update leaves the step as it was.
    template <class... Args> void set_args(std::size_t i, const Args&... args) {
        const Step& st = step(i);
        if (st.signature != &detail::signature_tag<Args...>)
            refuse(i, "set_args takes the argument types the step was added with");
        scratch_.assign(st.bytes.begin(), st.bytes.end());
        std::size_t k = 0;
        (std::memcpy(scratch_.data() + st.offsets[k++], &args, sizeof(Args)), ...);
        commit_args(i);
    }

    /// Changes step `i`'s grid, block and dynamic shared memory (up to what it was recorded
    /// with) in the recorded graph; the configuration is checked as a launch checks it. Its other launch
    /// attributes (PDL, cluster, cooperative) are part of the recording: a change of those is
    /// a LaunchError that says to record again.
    void set_config(std::size_t i, const LaunchConfig& config);

    [[nodiscard]] std::size_t size() const { return steps_.size(); }
    [[nodiscard]] bool recorded() const { return recorded_; }
    /// The graph's kernel node of each step, in step order (after record()).
    [[nodiscard]] const std::vector<CUgraphNode>& nodes() const { return nodes_; }
    /// The recorded graph (after record()).
    [[nodiscard]] const Graph& graph() const { return graph_; }

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
    };
    [[nodiscard]] Step& step(std::size_t i);
    /// A LaunchError about step `i`.
    [[noreturn]] void refuse(std::size_t i, const std::string& why) const;
    /// Makes scratch_ (step `i`'s argument bytes, laid out as its own) the step's arguments.
    void commit_args(std::size_t i);
    /// Points step `i`'s kernel node in the instantiated graph at the argument bytes `bytes`
    /// (laid out as the step's) and `config`'s grid, block and shared memory.
    void write_node(std::size_t i, std::byte* bytes, const LaunchConfig& config);
    /// "step I of N (kernel K)", the context of every error about a step.
    [[nodiscard]] std::string where(std::size_t i) const;

    std::vector<Step> steps_;
    Graph graph_;
    std::vector<CUgraphNode> nodes_;
    DeviceBuffer step_block_; ///< empty until step_block()
    /// The kernel that writes the step block at the head of the graph, and its node.
    std::shared_ptr<const Module> writer_module_;
    std::optional<Function> writer_;
    CUgraphNode writer_node_ = nullptr;
    std::vector<std::byte> block_values_; ///< the step block's last values (a re-recording's)
    /// Points the writer's node at `block_values_`.
    void write_block_node();
    std::vector<std::byte> scratch_; ///< set_args' new argument bytes
    std::vector<void*> pointers_;    ///< one pointer per argument, for the driver
    bool recorded_ = false;
};

} // namespace kjit
