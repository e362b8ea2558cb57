#pragma once

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

/// Compiles every kernel for each arch and prints one line per compile; kFindings on a failure.
int run_audit(const SourceOptions& sources, const std::vector<std::string>& archs);

Action add_audit(CLI::App& app);
Action add_compile(CLI::App& app);
Action add_check(CLI::App& app);
Action add_info(CLI::App& app);

} // namespace kjit::cli
