#pragma once

#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

namespace kjit {

/// Sets every row's check (IDENTICAL, DIFFERS (outputs), within tolerance, UNWRITTEN n,
/// FAILED, ...) and its time ratio against the baseline variant, by the spec's check mode.
void judge_sweep(const SweepSpec& spec, SweepResult& result);

} // namespace kjit
