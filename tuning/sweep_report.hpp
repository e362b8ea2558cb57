#pragma once

#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

#include <filesystem>
#include <string>

namespace kjit {

/// The result table as text (one line per variant, fastest first).
std::string sweep_table(const SweepSpec& spec, const SweepResult& result);
/// Writes DIR/sweep.csv, DIR/sweep.json and DIR/sweep.svg (median time per variant).
void write_sweep_outputs(const SweepSpec& spec, const SweepResult& result,
                         const std::filesystem::path& dir);

} // namespace kjit
