#pragma once
// From a sweep to the tuned table: the winner of a run, as the entry start-up reads.

#include "jit/tuned_table.hpp"
#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

#include <string>

namespace kjit {

/// The variant a tuned entry records, and why.
struct TunedPick {
    const SweepRow* row = nullptr;      ///< null when no variant passed its check
    const SweepRow* baseline = nullptr; ///< the sweep's baseline row (null when none ran)
    /// Set when the baseline was kept over a faster variant: "RMS_BLOCK=512 ran 0.6 % under
    /// the baseline, inside the noise (1.9 %): baseline kept".
    std::string note;
};

/// The fastest variant of `result` that passed its check and beats the sweep's baseline (its
/// [check] baseline, the first variant when it names none) beyond the noise: the larger of 1 %
/// and twice the standard error of the difference of the two medians, each estimated from its
/// repetitions' interquartile range (with fewer than four repetitions, 1 % alone). A pick
/// inside the noise is a coin toss that a later run may reverse: the baseline is kept then,
/// with a note. Without a baseline that passed, the fastest variant that passed.
TunedPick tuned_pick(const SweepResult& result);

/// The tuned-table entry of `result`: tuned_pick's variant, with the swept defines and the
/// sweep file's fixed ones, the shape, dtype, GPU and arch it ran at, the hash of the sources
/// it compiled (result.tuned_source), its median and the baseline's. ConfigError when no
/// variant passed or the winner's choice lies only in launch parameters, which a compile
/// cannot carry (the entry records defines). `pick` is tuned_pick(result).
TunedEntry tuned_entry(const SweepSpec& spec, const SweepResult& result, const TunedPick& pick);
inline TunedEntry tuned_entry(const SweepSpec& spec, const SweepResult& result) {
    return tuned_entry(spec, result, tuned_pick(result));
}

} // namespace kjit
