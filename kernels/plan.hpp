#pragma once

#include "core/error.hpp"
#include "kernels/contract.hpp"
#include "kernels/shape.hpp"
#include "runtime/launch.hpp"

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Launch parameter values by name.
using LaunchValues = std::map<std::string, long long>;

/// One buffer of a contract evaluated at a case.
struct BufferSpec {
    std::string name;
    DType dtype = DType::f32;
    std::size_t count = 0;
    /// Inputs: element i is uniform(seed, i) * scale + offset in fp32, rounded to the dtype.
    float scale = 1.0f;
    float offset = 0.0f;  ///< with scale, the range the math needs (a decay below zero)
    double tolerance = 0; ///< outputs: relative L2 `kjit check` allows; 0: output_tolerance's
    ArgRole role = ArgRole::input;
    [[nodiscard]] std::size_t bytes() const { return count * dtype_size(dtype); }
};

/// The relative L2 error `kjit check` allows an output: its tolerance when set, else 1e-6 for
/// f32 and 1e-2 for bf16.
double output_tolerance(const BufferSpec& output);

/// One scalar argument of a contract evaluated at a case: the bytes the kernel receives.
struct ScalarSpec {
    std::string name;
    ArgType type = ArgType::i32;
    double value = 0; ///< the value after rounding to the type
    std::array<std::byte, 8> bytes{};
    std::size_t size = 4; ///< bytes, and the alignment
};

/// A kernel parameter of a launch step: buffer or scalar `index` of the plan.
struct ParamRef {
    bool scalar = false;
    std::size_t index = 0;
};

/// One pipeline step evaluated at a case.
struct StepPlan {
    PipelineStep::Kind kind = PipelineStep::Kind::launch;
    std::string entry; ///< launch: the entry point
    Dim3 grid, block;
    unsigned smem = 0;
    std::vector<ParamRef> params;
    const void* signature = nullptr; ///< launch: one token per list of parameter sizes
    std::size_t from = 0, to = 0;    ///< copy: buffer indices
    bool main = false;               ///< launch: marked the one reports describe
    /// The launch configuration on `stream`.
    [[nodiscard]] LaunchConfig config(CUstream stream = nullptr) const;
};

/// A contract evaluated at a shape, a dtype, a define set and launch parameter values: the
/// concrete buffers, scalars and launches one run of the pipeline needs.
struct CasePlan {
    std::string kernel;    ///< the contract's name
    std::string source;    ///< the kernel source
    std::string reference; ///< the contract's float64 reference ("" when it has none)
    DType dtype = DType::f32;
    ShapeValues shape;
    Defines defines;     ///< the contract's defaults with the case's overrides
    LaunchValues launch; ///< every launch parameter
    std::vector<BufferSpec> buffers;
    std::vector<ScalarSpec> scalars;
    std::vector<StepPlan> steps;
    double bytes = 0; ///< moved by one run (0: the contract does not say)
    double flops = 0;
    std::vector<std::size_t> inputs;  ///< buffers generated on the host, in the contract's order
    std::vector<std::size_t> outputs; ///< buffers checked after a run, in the contract's order

    /// The launch step marked main, else the last launch: the one reports describe.
    [[nodiscard]] const StepPlan& main_launch() const;
    /// Every launch's entry point in order, " + " between: "splitk_partial + splitk_reduce".
    [[nodiscard]] std::string launches_text() const;
    /// The entry point of main_launch().
    [[nodiscard]] const std::string& entry() const { return main_launch().entry; }
    /// The buffer named `name`, or nullptr.
    [[nodiscard]] const BufferSpec* find_buffer(std::string_view name) const;
    /// The scalar named `name`, or nullptr.
    [[nodiscard]] const ScalarSpec* find_scalar(std::string_view name) const;
};

/// A case fails one of its contract's preconditions.
class PreconditionError : public ConfigError {
  public:
    using ConfigError::ConfigError;
};

/// A contract with every expression compiled once: plans many cases cheaply. Not for use by
/// two threads at once.
class ContractPlanner {
  public:
    /// Checks the contract's structure and compiles its expressions; ConfigError
    /// "contract NAME: ..." at the first mistake.
    explicit ContractPlanner(KernelContract contract);
    ContractPlanner(ContractPlanner&&) noexcept;
    ContractPlanner& operator=(ContractPlanner&&) noexcept;
    ~ContractPlanner();

    /// The case at `shape` and `dtype` with `defines` over the contract's and `launch` over
    /// its launch parameters' defaults; PreconditionError for a failed precondition,
    /// ConfigError for a dtype the contract lacks, an unknown launch parameter or a value out
    /// of range.
    [[nodiscard]] CasePlan plan(const ShapeValues& shape, DType dtype, const Defines& defines = {},
                                const LaunchValues& launch = {}) const;
    /// Every launch parameter's value at the case: `launch`, else its default.
    [[nodiscard]] LaunchValues launch_values(const ShapeValues& shape, DType dtype,
                                             const Defines& defines = {},
                                             const LaunchValues& launch = {}) const;
    [[nodiscard]] const KernelContract& contract() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// `plans.front()` with each buffer as large as its largest in `plans` (plans of one contract
/// at one shape and dtype, whose defines may size a buffer differently: a split-K workspace):
/// buffers that serve every plan. Generated inputs agree on their common prefix, so each plan
/// reads the values it would have alone.
CasePlan buffer_capacity(std::span<const CasePlan> plans);

/// ContractPlanner(contract).plan(...): one case.
CasePlan plan_case(const KernelContract& contract, const ShapeValues& shape, DType dtype,
                   const Defines& defines = {}, const LaunchValues& launch = {});

/// The kind of a step's parameter as the contract declares it: a buffer is a pointer, an f32 or
/// f64 scalar floating point, an integer scalar an integer. The first launch compares it with
/// the kernel's parameter types from the PTX (Function::param_types).
ArgKind param_kind(const CasePlan& plan, const ParamRef& ref);

} // namespace kjit
