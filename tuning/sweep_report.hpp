#pragma once

#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

#include <filesystem>
#include <string>

namespace kjit {

/// The result table as text (one line per variant, fastest first).
std::string sweep_table(const SweepSpec& spec, const SweepResult& result);
/// Where a sweep of `file` writes its outputs: `out` when it is not empty, else the file's stem
/// with ".out" under the current directory ("rms_norm.sweep.out" for any path to
/// rms_norm.sweep.toml).
std::filesystem::path sweep_out_dir(const std::filesystem::path& file, const std::string& out);
/// Writes DIR/sweep.csv, DIR/sweep.json and DIR/sweep.svg (median time per variant).
void write_sweep_outputs(const SweepSpec& spec, const SweepResult& result,
                         const std::filesystem::path& dir);

} // namespace kjit
