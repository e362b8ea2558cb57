#pragma once
// `kjit lint`: source errors NVRTC reports far from their cause, or not at all. The text rules
// need nothing but the source, the directive rules walk the preprocessor's path as NVRTC takes
// it (lint/preprocess.hpp), the others read a libclang parse (lint/libclang.hpp).

#include "core/diagnostic.hpp"
#include "jit/include_resolver.hpp"
#include "jit/sources.hpp"
#include "lint/injections.hpp"
#include "lint/libclang.hpp"
#include "lint/sources.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace kjit::lint {

/// What `lint` checks.
struct LintRequest {
    const SourceSet* sources = nullptr;
    std::vector<std::string> targets; ///< names of the files to lint; empty: every file
    std::vector<Injection> injections;
    const Libclang* clang = nullptr; ///< nullptr: the rules that need no libclang only
    std::string clang_missing;       ///< why clang is null, for the note that says so
    /// Where includes lead (the compiler's lookup); nullptr: `sources`, no extra include
    /// directory, the toolkit's include directories.
    const IncludeResolver* resolver = nullptr;
    /// The target architectures: conditions are evaluated with each one's __CUDA_ARCH__.
    std::vector<std::string> archs = {"sm_90"};
};

/// The findings, sorted by path, line and column, and notes on what was not checked.
struct LintReport {
    std::vector<Diagnostic> findings;
    std::vector<std::string> notes;
    std::size_t files = 0;
};

/// Runs every rule that can run; parses in parallel, one thread per kernel and define set.
LintReport lint(const LintRequest& request);

/// How `kjit lint` and kjit.lint lint groups of files (lint/sources.hpp).
struct LintRun {
    /// Shape files whose define sets apply to every group (each checked against the sources
    /// when there is one group); empty: each group's directory's shape files beside it.
    std::vector<std::filesystem::path> shape_files;
    std::vector<std::filesystem::path> include_dirs; ///< beyond the sources' own
    std::vector<std::string> archs;                  ///< empty: sm_90
    std::string libclang;                            ///< empty: the first known that loads
    /// The define sets of the project's contracts (Injection::contract), for every group.
    std::vector<Injection> contract_injections;
};

/// Lints every group with one libclang; the findings of all, each note once.
LintReport lint_groups(const std::vector<SourceGroup>& groups, const LintRun& run);

} // namespace kjit::lint
