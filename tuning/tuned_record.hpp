#pragma once
// From a sweep to the tuned table: the winner of a run, as the entry start-up reads.

#include "jit/tuned_table.hpp"
#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

namespace kjit {

/// The tuned-table entry of `result`: its fastest variant that passed its check, with the
/// swept defines and the sweep file's fixed ones, the shape, dtype, GPU and arch it ran at, the
/// hash of the sources it compiled (result.tuned_source), its median and the baseline's.
/// ConfigError when no
/// variant passed or the winner's choice lies only in launch parameters, which a compile
/// cannot carry (the entry records defines).
TunedEntry tuned_entry(const SweepSpec& spec, const SweepResult& result);

} // namespace kjit
