#pragma once
// The digest baseline policy (tuning/baseline_policy.hpp) run on a device: a record of every
// case and a check of every recorded one, each case through a prepared arm.

#include "kernels/plan.hpp"
#include "tuning/baseline_policy.hpp"
#include "tuning/case_arms.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kjit {

/// A record, planned before a device is touched.
struct DigestRecordPlan {
    std::vector<DigestCase> cases;
    Defines defines;             ///< the contract's defines with the record's overrides
    std::vector<CasePlan> plans; ///< one per case
};

/// record_cases() planned with `overrides` (NAME=VALUE) over the contract's defines;
/// ConfigError (or PreconditionError) at the first mistake.
DigestRecordPlan plan_digest_record(const KernelContract& contract,
                                    const DigestSelection& selection,
                                    std::span<const std::string> overrides);

/// One case run for a record.
struct RecordedRun {
    BaselineCase recorded;            ///< what the baseline gets
    std::vector<Unwritten> unwritten; ///< per output, in recorded.outputs' order
};

/// Runs case `index` of `plan` once through `arm` (prepared with plan.defines) on generator
/// inputs from `seed`, outputs filled with the canary first.
RecordedRun record_digest_case(const DigestRecordPlan& plan, std::size_t index,
                               const PreparedArm& arm, std::uint64_t seed);

/// A check, planned before a device is touched.
struct DigestCheckPlan {
    std::vector<CheckedCase> cases;
    /// Every define set the check prepares, once each: the checked ones and, for the
    /// element-wise comparison of a differing output, the recorded ones.
    std::vector<Defines> define_sets;
    std::vector<std::size_t> now_set, ref_set; ///< per case: its checked and recorded set
    std::vector<CasePlan> now_plans, ref_plans; ///< per case, with those sets
};

/// checked_cases() with every define set and plan the check needs; ConfigError (or
/// PreconditionError) at the first mistake.
DigestCheckPlan plan_digest_check(const KernelContract& contract, const Baseline& baseline,
                                  const DigestSelection& selection,
                                  std::span<const std::string> overrides);

/// One output of a checked case against the baseline.
struct CheckedOutput {
    std::string name;
    DType dtype = DType::f32;
    std::size_t count = 0;
    std::uint64_t digest = 0;               ///< now
    const OutputDigest* recorded = nullptr; ///< nullptr: the baseline records none of this name
    DigestVerdict verdict = DigestVerdict::identical;
    /// differs, and the check ran the recorded defines themselves: they no longer give the
    /// recorded digest (the kernel, GPU or tier changed) and, the values behind a digest not
    /// being stored, there is no index to name.
    bool stale = false;
    /// differs with other defines: the digest the recorded defines give now, from a
    /// reference run in the same process (nothing when that run lacks the output).
    std::optional<std::uint64_t> reference_digest;
    /// differs with other defines: the first difference from the reference run (nothing when
    /// the values are the same).
    std::optional<Difference> difference;
    Unwritten unwritten;
};

/// One recorded case rerun.
struct CheckedRun {
    std::vector<CheckedOutput> outputs;
    /// Any output not IDENTICAL.
    [[nodiscard]] bool differs() const;
};

/// Reruns case `index` of `plan` through `arms` (prepared from plan.define_sets, in order) on
/// generator inputs from `seed` and judges every output; a differing output is compared
/// element by element with a run of the recorded defines.
CheckedRun check_digest_case(const DigestCheckPlan& plan, std::size_t index,
                             std::span<const PreparedArm> arms, std::uint64_t seed);

/// The tally of a digest check; it passes when no case differs and every output was fully
/// written.
struct DigestTally {
    int identical = 0; ///< cases whose every output is IDENTICAL
    int differs = 0;   ///< cases with an output that DIFFERS
    int unwritten = 0; ///< outputs with elements still holding the canary
    /// Counts one checked case.
    void add(const CheckedRun& run);
    [[nodiscard]] bool passed() const { return differs == 0 && unwritten == 0; }
};

} // namespace kjit
