#pragma once

#include "jit/compile_pool.hpp"
#include "jit/source_choice.hpp"
#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kjit {

/// How `kjit sweep` runs a spec.
struct SweepOptions {
    bool dry_run = false;        ///< parse, expand, compile every variant; launch nothing
    bool no_cache = false;       ///< neither the compile cache nor the results cache
    std::string arch;            ///< dry run target (default sm_90); a run uses each device's
    std::vector<int> devices{0}; ///< GPUs to spread the variants over, one worker each
    std::uint64_t seed = 1;      ///< input generator seed
    CompileProgress progress;
    /// Called after each variant is run and timed: (done, total) over the variants the results
    /// cache did not hold, under a lock (the device workers call it in turn); empty: nothing.
    std::function<void(std::size_t done, std::size_t total)> measured;
    /// Where the kernel sources come from; empty: default_sources() (KJIT_KERNEL_DIR, the
    /// project file found from the working directory, the embedded copies).
    std::optional<SourceChoice> sources;
};

/// Every define the sweep file injects (its [defines] and swept defines) must be read by its
/// kernel in `sources` (unread_defines: an identifier of the kernel or the files it can
/// include, and not #defined again), else the sweep would time one kernel many times:
/// ConfigError at the first such define where the file writes it, or at its `kernel` when the
/// sources lack that kernel. run_sweep checks it (and its contract's [defines]) first; kjit
/// audit checks the project's sweep files.
void check_sweep_defines_read(const SweepSpec& spec, const SourceSet& sources);

/// Compiles every variant (in parallel, through the cache), then runs, checks and times each
/// variant's pipeline; a variant that fails is recorded with its error and the sweep goes on.
SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options);

} // namespace kjit
