#pragma once

#include "kernels/case_buffers.hpp"
#include "kernels/contract.hpp"
#include "kernels/launch_case.hpp"
#include "kernels/plan.hpp"
#include "runtime/engine.hpp"
#include "tuning/bench.hpp"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// A kernel prepared through an engine with one define set; valid while the engine lives.
struct PreparedArm {
    Engine* engine = nullptr;
    std::string spec_name; ///< the engine's name for it: "rms_norm/RMS_BLOCK=256"
    Defines defines;       ///< what the launch reads (the contract's defaults overridden)
    Provenance provenance;
    /// What it was compiled with, for the front end that reads its parameters' C++ types.
    std::shared_ptr<const CompiledKernel> compiled;
    /// The entry point `entry` of the prepared module.
    [[nodiscard]] const Function& function(std::string_view entry) const {
        return engine->function(spec_name, entry);
    }
    /// The Function of each step of `plan` (nullptr for copies).
    [[nodiscard]] std::vector<const Function*> functions(const CasePlan& plan) const;
};

/// The engine's spec of `contract` compiled with `defines`, named "conv1d/CONV_BLOCK=256/...":
/// equal define sets share one name.
KernelSpec case_spec(const KernelContract& contract, const Defines& defines);

/// Prepares `contract` for each define set through `engine` (parallel compiles, cached);
/// rethrows the first compile or load error.
std::vector<PreparedArm> prepare_arms(Engine& engine, const KernelContract& contract,
                                      const std::vector<Defines>& define_sets,
                                      const Device& device);

/// The arguments of each plan in `plans` against the C++ types of the parameters they fill in
/// `arm`'s compile (launch_type_problem), once per dtype: what no launch check sees (a `bf16*`
/// or an `i64` for a `const float*` is a `.u64` in the PTX). ConfigError where `contract`
/// declares the argument.
void require_launch_types(const PreparedArm& arm, const KernelContract& contract,
                          std::span<const CasePlan* const> plans);

/// The launch sequence of `plan` through `arm` on `buffers` (the selected input set at each
/// call); `buffers` must outlive it.
LaunchSequence case_launch(const PreparedArm& arm, const CasePlan& plan,
                           const CaseBuffers& buffers);

/// run_case_once (kernels/launch_case.hpp) through `arm`'s entry points.
std::vector<HostBuffer> run_case_once(const PreparedArm& arm, const CasePlan& plan,
                                      CaseBuffers& buffers, LaunchConfig* launched = nullptr);

} // namespace kjit
