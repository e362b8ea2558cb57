#pragma once

#include "tuning/bench.hpp"
#include "tuning/sweep_plan.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kjit {

/// One variant's outcome.
struct SweepRow {
    SweepVariant variant;
    std::string error;   ///< compile or launch failure ("" when it ran)
    bool cached = false; ///< taken from the results cache
    int device = 0;
    int blocks_per_sm = 0;
    double waves = 0, sm_share = 0;
    int registers = 0;
    Stats stats;           ///< ms per run of the pipeline
    double gbps = 0;       ///< the contract's bytes / median (0 when it states none)
    double copy_share = 0; ///< gbps / device-to-device copy bandwidth
    std::vector<std::pair<std::string, std::uint64_t>> digests; ///< per output
    std::size_t unwritten = 0;
    double error_vs_reference = -1; ///< tolerance mode: worst relative L2 over the outputs
    double max_abs_vs_reference = -1; ///< tolerance mode: worst absolute error of any element
    std::string check;              ///< IDENTICAL / DIFFERS at i (a vs b) / within tolerance / ...
    double ratio = 0;               ///< median / the baseline's median
    std::string key;                ///< results-cache key
};

/// The rows of a sweep, and what produced them.
struct SweepResult {
    std::vector<SweepRow> rows;
    std::size_t rejected = 0; ///< combinations the constraints removed
    /// How the variants were chosen: "exhaustive: 35 points" or "random: 200 of 1000000
    /// points, seed 1".
    std::string search;
    Provenance provenance;    ///< gpu, arch, fixed defines, tier, kernel source hash
    /// tuned_source_hash() of the sources the variants were compiled from (a tuned entry's
    /// `source`: the kernel and its headers as measured, not as they are after the run).
    std::string tuned_source;
    double copy_gbps = 0;
    double wall_ms = 0;
};

} // namespace kjit
