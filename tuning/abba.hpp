#pragma once

#include "tuning/bench.hpp"

#include <string>
#include <vector>

namespace kjit {

/// One side of an A/B comparison: what it runs and what produced it.
struct AbbaArm {
    std::string label; ///< "A" or "B" in the printout
    LaunchSequence launch;
    Provenance provenance; ///< printed with the arm (defines, tier, source hash, GPU)
};

/// The readings of an A B B A run: one block of reps per arm run, in run order.
struct AbbaResult {
    std::string order;           ///< "ABBAAB" for three pairs
    std::vector<Stats> a_blocks; ///< A's blocks in the order they ran
    std::vector<Stats> b_blocks;
    Stats a;     ///< every rep of A together
    Stats b;     ///< every rep of B together
    Stats ratio; ///< B/A of the block medians, one sample per pair
};

/// The run order for `pairs` pairs: A B, then B A, alternating ("ABBAAB" for 3), so slow
/// drift (clocks, temperature) weighs on both arms alike.
std::string abba_order(int pairs);

/// Builds the result from blocks already timed in abba_order(pairs); the ratio's samples are
/// median(B block i) / median(A block i).
AbbaResult summarize_abba(int pairs, std::vector<Stats> a_blocks, std::vector<Stats> b_blocks);

/// Runs the two arms interleaved A B B A on `bench` for `pairs` pairs, each run a full bench
/// (warm-ups and reps).
AbbaResult run_abba(Bench& bench, const AbbaArm& a, const AbbaArm& b, int pairs);

/// Every rep of each block, the per-arm statistics and the ratio B/A with its spread.
std::string format_abba(const AbbaResult& result, const AbbaArm& a, const AbbaArm& b);

} // namespace kjit
