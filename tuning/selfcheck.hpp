#pragma once

#include "kernels/host_buffer.hpp"
#include "kernels/plan.hpp"
#include "runtime/engine.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kjit {

/// One launch-and-compare of `kjit check`: a contract at a shape, a dtype and a define set,
/// compared output by output with the contract's float64 reference, or, for a contract without
/// one, with its pipeline under the reference defines.
struct CheckCase {
    std::string kernel; ///< the contract: "conv1d"
    std::string shape;  ///< in the contract's keys: "b=8,c=4096,t=1300"
    DType dtype = DType::f32;
    std::vector<std::string> defines{}; ///< NAME=VALUE over the contract's defaults
};

/// One output against its reference.
struct OutputCheck {
    std::string name; ///< "y"
    double error = 0; ///< relative L2; +inf when any element is not finite
    double tolerance = 0;
    std::size_t unwritten = 0; ///< elements still holding the canary
    [[nodiscard]] bool passed() const { return unwritten == 0 && error <= tolerance; }
};

/// The outcome of one check case.
struct CheckResult {
    std::string kernel;  ///< "rms_norm"
    std::string entry;   ///< "rms_norm_f32"
    std::string shape;   ///< "rows=4096,n=7168"
    std::string defines; ///< every define of the launch: "RMS_BLOCK=256"
    std::string grid, block;
    /// What the outputs were compared with: "float64" (the registered reference) or the
    /// reference defines ("SPLIT_K=1").
    std::string reference;
    std::vector<OutputCheck> outputs; ///< in the plan's order
    /// Every output within its tolerance and fully written.
    [[nodiscard]] bool passed() const;
};

/// The check shapes of every registered contract, in registry order, each in its dtypes.
std::vector<CheckCase> default_check_cases();

/// The contract's defaults overridden by the case's defines; ConfigError on a bad assignment.
Defines check_defines(const CheckCase& c);

/// check_defines(c) with the contract's reference defines over them: the defines of the
/// pipeline a contract without a float64 reference is compared with.
Defines check_reference_defines(const CheckCase& c);

/// The plan of the case: its shape parsed, its defines merged (ConfigError on a mistake).
CasePlan check_plan(const CheckCase& c);

/// The engine specs `cases` need (with the reference defines' where a contract has no float64
/// reference), each define set once.
std::vector<KernelSpec> check_specs(std::span<const CheckCase> cases);

/// Compares `got` with `want` (relative L2) and counts its canary elements.
OutputCheck compare_output(const HostBuffer& got, std::span<const double> want, double tolerance);

/// Launches the case (its spec prepared by `engine`, from check_specs) on generator inputs
/// from `seed`, outputs poisoned with the canary first, and compares every output with the
/// contract's reference.
CheckResult run_check_case(Engine& engine, const CheckCase& c, std::uint64_t seed);

/// One check case run: its result, or the error that kept it from finishing.
struct CheckOutcome {
    std::optional<CheckResult> result;
    std::string error; ///< what() of the Error run_check_case threw
    [[nodiscard]] bool passed() const { return result && result->passed(); }
};

/// run_check_case with an Error caught into the outcome, so that the other cases still run.
CheckOutcome try_check_case(Engine& engine, const CheckCase& c, std::uint64_t seed);

/// The pass/fail summary of `kjit check`: it passes when the audit passed, every spec was
/// prepared and every case passed.
struct CheckSummary {
    bool audit_passed = true;
    int unprepared = 0; ///< specs that failed to compile or load: no case is launched then
    int failed = 0;     ///< cases that failed or did not finish
    /// Counts one case.
    void add(const CheckOutcome& outcome) { failed += outcome.passed() ? 0 : 1; }
    [[nodiscard]] bool passed() const { return audit_passed && unprepared == 0 && failed == 0; }
};

} // namespace kjit
