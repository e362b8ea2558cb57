#pragma once

#include "jit/compile_cache.hpp"
#include "jit/freshness.hpp"
#include "jit/project.hpp"
#include "jit/source_choice.hpp"
#include "jit/sources.hpp"
#include "jit/tuned_table.hpp"
#include "lint/injections.hpp"
#include "lint/sources.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {
struct SweepSpec;
struct KernelContract;
struct SweepResult;
} // namespace kjit

namespace kjit::cli {

/// Exit codes of every verb.
enum Exit : int { kOk = 0, kFindings = 1, kUsage = 2 };

/// The check of every --arch option: a real architecture (sm_NN, sm_NNa, sm_NNf), else a
/// usage error naming the value, before anything is read or compiled.
CLI::Validator arch_check();

/// The check of every --seed option: a whole number from 0 to 2^64 - 1, without a sign.
CLI::Validator seed_check();

/// The body of a verb, run after parsing; returns the exit code.
using Action = std::function<int()>;

/// Options shared by the verbs that read kernel sources: --src and --project, resolved in the
/// one precedence (flag, KJIT_KERNEL_DIR, project file, embedded copies).
struct SourceOptions {
    std::string dir;     ///< --src: read kernels from this directory
    std::string project; ///< --project: this project file instead of the one found from the cwd
    bool quiet = false;  ///< print no `sources:` line (JSON output)
    /// Adds --src and --project.
    void add_to(CLI::App& app);
    /// Adds --project only (verbs whose FILES name their sources).
    void add_project_to(CLI::App& app);
    /// The project file in effect, read once; nullptr when there is none.
    [[nodiscard]] const Project* project_file() const;
    /// The extra include directories in search order: `flags` (-I), then the project file's.
    [[nodiscard]] std::vector<std::filesystem::path>
    include_dirs(const std::vector<std::string>& flags) const;
    /// The sources chosen; prints `sources: ...` on stderr the first time.
    [[nodiscard]] const SourceChoice& choice() const;
    /// choice(), or ConfigError (exit 2) when it is the embedded copies: `verb` reads files.
    const SourceChoice& on_disk(std::string_view verb) const;
    /// The source groups of a verb that takes FILES (lint, sig): FILES, or the copies embedded
    /// in this binary with `embedded`, said on stderr as `sources: ...` (unless quiet); else
    /// the directory on_disk(verb) chooses.
    [[nodiscard]] std::vector<lint::SourceGroup>
    file_groups(const std::vector<std::string>& files, bool embedded, std::string_view verb) const;
    /// Registers the contracts the project file names (kernels/registry.hpp), once; their
    /// names, in the file's order (empty without a project file or its `contracts`).
    const std::vector<std::string>& register_contracts() const;
    /// The define sets the project's contracts inject (lint::Injection::contract): each one's
    /// [defines], each check case's over them, and each with the reference defines over it.
    [[nodiscard]] std::vector<lint::Injection> contract_injections() const;
    /// The contract of `kernel` (the project's registered first); NotFoundError naming the
    /// contracts of kernels these sources hold, not every one this binary knows.
    [[nodiscard]] const KernelContract& contract(std::string_view kernel) const;
    /// The sources chosen, read once: every check of a verb sees the same files.
    [[nodiscard]] const SourceSet& load() const;
    [[nodiscard]] SourceProvider provider() const { return choice().provider(); }
    /// "embedded at build time" or "from DIR".
    [[nodiscard]] std::string describe() const;

  private:
    [[nodiscard]] const SourceChoice& resolved() const;
    mutable std::optional<std::optional<Project>> project_;
    mutable std::optional<SourceChoice> choice_;
    mutable std::optional<SourceSet> set_;
    mutable bool printed_ = false;
    mutable std::optional<std::vector<std::string>> contracts_;
};

/// --shape-file: the shape files a verb reads instead of the project's or those beside the
/// sources.
struct ShapeOptions {
    std::vector<std::string> files;
    void add_to(CLI::App& app);
    /// The shape files chosen (choose_shape_files) for `sources`.
    [[nodiscard]] std::vector<std::filesystem::path> choose(const SourceOptions& sources) const;
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
/// Draws "measuring [done/total], about N s left" on one terminal line as variants are timed;
/// an empty function when stderr is no terminal.
std::function<void(std::size_t, std::size_t)> measure_progress();

/// A binary whose embedded sources `kjit fresh` compares, and where the project file names it.
struct FreshBinary {
    std::filesystem::path path;
    std::optional<SourceLocation> named_at; ///< kjit.toml:LINE; none for --binary
};

/// The binaries compared: `flags` (--binary), else the project file's `binaries` when the
/// sources are the project's kernels.
std::vector<FreshBinary> fresh_binaries(const SourceOptions& sources,
                                        const std::vector<std::string>& flags);

/// Compares `disk` (the tree `choice` names) with the sources each binary embeds, read from its
/// manifest, or with this kjit's own embedded copies when there is no binary; prints a report
/// per binary as `kjit fresh` does. kFindings when any file is out of date; ConfigError for a
/// binary the project file names that is not built, or one that embeds no kernel tree.
int check_fresh(const SourceChoice& choice, const SourceSet& disk,
                const std::vector<FreshBinary>& binaries);

/// Compiles every kernel for each arch and prints one line per compile; kFindings on a failure.
int run_audit(const SourceOptions& sources, const ShapeOptions& shapes,
              const std::vector<std::string>& archs, const CacheOptions& cache);

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
Action add_tune(CLI::App& app);

/// Adds the entry of `result`'s winner (tuned_entry) to the tuned table at `table` (read first
/// when it exists) and says so, with why the baseline was kept when it was.
void record_winner(const std::filesystem::path& table, const SweepSpec& spec,
                   const SweepResult& result);
Action add_bench(CLI::App& app);
Action add_digest(CLI::App& app);

} // namespace kjit::cli
