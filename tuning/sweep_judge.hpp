#pragma once

#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

namespace kjit {

/// Sets every row's check (IDENTICAL, DIFFERS (outputs), within tolerance, UNWRITTEN n,
/// FAILED, ...) and its time ratio against the baseline variant, by the spec's check mode.
void judge_sweep(const SweepSpec& spec, SweepResult& result);

/// Whether a judged row passed: it ran, and its check is IDENTICAL, within tolerance, or none
/// ("-").
bool row_passed(const SweepRow& row);

/// The rows that failed: in a dry run those that did not compile, otherwise those that did not
/// pass (row_passed). `kjit sweep` exits 1 when there is any.
int failed_rows(const SweepResult& result, bool dry_run);

} // namespace kjit
