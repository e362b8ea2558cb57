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
/// The result as JSON: kernel, provenance, search, rejected, wall_ms, copy_gbps and one object
/// per variant (variant, params, device, baseline, grid, block, blocks_per_sm, waves, sm_share,
/// median_ms, samples_ms, gbps, ratio, check, error): sweep.json, and kjit.sweep in Python.
std::string sweep_json(const SweepSpec& spec, const SweepResult& result);
/// Writes DIR/sweep.csv, DIR/sweep.json and DIR/sweep.svg (median time per variant).
void write_sweep_outputs(const SweepSpec& spec, const SweepResult& result,
                         const std::filesystem::path& dir);

} // namespace kjit
