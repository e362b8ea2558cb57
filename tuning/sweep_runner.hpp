#pragma once

#include "jit/compile_pool.hpp"
#include "tuning/bench.hpp"
#include "tuning/sweep_spec.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kjit {

/// How `kjit sweep` runs a spec.
struct SweepOptions {
    bool dry_run = false;   ///< parse, expand, compile every variant; launch nothing
    bool no_cache = false;  ///< neither the compile cache nor the results cache
    std::string arch;       ///< dry run target (default sm_90); a run uses each device's
    std::vector<int> devices{0}; ///< GPUs to spread the variants over, one worker each
    std::uint64_t seed = 1; ///< input generator seed
    CompileProgress progress;
};

/// One variant's outcome.
struct SweepRow {
    SweepVariant variant;
    std::string error;        ///< compile or launch failure ("" when it ran)
    bool cached = false;      ///< taken from the results cache
    int device = 0;
    int blocks_per_sm = 0;
    double waves = 0, sm_share = 0;
    int registers = 0;
    Stats stats;              ///< ms per launch
    double gbps = 0;          ///< bytes / median (0 without a bytes expression)
    double copy_share = 0;    ///< gbps / device-to-device copy bandwidth
    std::vector<std::pair<std::string, std::uint64_t>> digests; ///< per output
    std::size_t unwritten = 0;
    double error_vs_reference = -1; ///< tolerance mode: worst relative L2 over the outputs
    std::string check;        ///< IDENTICAL / DIFFERS at i (a vs b) / within tolerance / ...
    double ratio = 0;         ///< median / the baseline's median
    std::string key;          ///< results-cache key
};

/// The rows of a sweep, and what produced them.
struct SweepResult {
    std::vector<SweepRow> rows;
    std::size_t rejected = 0; ///< combinations the constraints removed
    Provenance provenance;    ///< gpu, arch, fixed defines, tier, kernel source hash
    double copy_gbps = 0;
    double wall_ms = 0;
};

/// Compiles every variant (in parallel, through the cache), then launches, checks and times
/// each; a variant that fails is recorded with its error and the sweep goes on.
SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options);

/// The result table as text (one line per variant, fastest first).
std::string sweep_table(const SweepSpec& spec, const SweepResult& result);
/// Writes DIR/sweep.csv, DIR/sweep.json and DIR/sweep.svg (median time per variant).
void write_sweep_outputs(const SweepSpec& spec, const SweepResult& result,
                         const std::filesystem::path& dir);

} // namespace kjit
