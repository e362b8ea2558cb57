#pragma once

#include "jit/compile_cache.hpp"
#include "jit/freshness.hpp"
#include "jit/sources.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace kjit::cli {

/// Exit codes of every verb.
enum Exit : int { kOk = 0, kFindings = 1, kUsage = 2 };

/// The body of a verb, run after parsing; returns the exit code.
using Action = std::function<int()>;

/// Options shared by the verbs that read kernel sources.
struct SourceOptions {
    std::string dir; ///< --src: read kernels from this directory instead of the embedded copy
    void add_to(CLI::App& app);
    [[nodiscard]] SourceSet load() const;
    [[nodiscard]] std::string describe() const;
};

/// Options shared by the verbs that compile: every compile goes through the cache.
struct CacheOptions {
    bool no_cache = false; ///< --no-cache: compile everything, read and write no entry
    int jobs = 0;          ///< --jobs: parallel compiles (0: KJIT_COMPILE_JOBS or cores)
    void add_to(CLI::App& app);
    /// Settings whose compile workers are this executable (`kjit compile-worker`).
    [[nodiscard]] CacheSettings settings() const;
};

/// Draws "[done/total] what" on one terminal line; prints nothing when stderr is no terminal.
CompileProgress progress_line(const std::string& what);

/// Prints `report` as `kjit fresh` does (`src`: the directory it was checked against); kFindings
/// when anything is out of date.
int print_fresh(const FreshnessReport& report, const std::string& src);

/// Compiles every kernel for each arch and prints one line per compile; kFindings on a failure.
int run_audit(const SourceOptions& sources, const std::vector<std::string>& archs,
              const CacheOptions& cache);

Action add_audit(CLI::App& app);
Action add_compile(CLI::App& app);
Action add_env(CLI::App& app);
Action add_check(CLI::App& app);
Action add_info(CLI::App& app);
Action add_specialize(CLI::App& app);
Action add_fresh(CLI::App& app);
Action add_cache(CLI::App& app);
Action add_compile_worker(CLI::App& app);
Action add_lint(CLI::App& app);
Action add_sig(CLI::App& app);
Action add_ledger(CLI::App& app);
Action add_sweep(CLI::App& app);
Action add_bench(CLI::App& app);
Action add_digest(CLI::App& app);

} // namespace kjit::cli
