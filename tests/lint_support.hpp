#pragma once
// Helpers shared by the linter's tests (test_lint, test_lint_walk, test_sig).

#include "lint/injections.hpp"
#include "lint/libclang.hpp"
#include "lint/lint.hpp"
#include "lint/sources.hpp"
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace kjit::test {

inline const std::filesystem::path kLintFixtures = KJIT_SOURCE_DIR "/tests/fixtures/lint";
inline const std::filesystem::path kKernelSources = KJIT_SOURCE_DIR "/kernel_src";

/// libclang when one loads (each test says so when it is missing), else nullptr.
inline const lint::Libclang* libclang() {
    static std::string why_not;
    static const std::unique_ptr<lint::Libclang> lib = lint::Libclang::open({}, &why_not);
    if (!lib)
        MESSAGE("libclang not found, clang rules not tested: " << why_not);
    return lib.get();
}

/// Lints the tree under `dir` as `kjit lint DIR` does (its shape files apply).
inline lint::LintReport lint_dir(const std::filesystem::path& dir, const lint::Libclang* clang) {
    const auto groups = lint::source_groups({dir.string()}, false, {});
    lint::LintRequest request{&groups.front().sources, {}, lint::find_injections(dir), clang,
                              "not loaded"};
    return lint::lint(request);
}

/// The findings in compiler format, sorted.
inline std::vector<std::string> formatted(const lint::LintReport& report) {
    std::vector<std::string> out;
    for (const auto& f : report.findings)
        out.push_back(f.format());
    std::sort(out.begin(), out.end());
    return out;
}

/// Every line, each ending in a newline.
inline std::string join_lines(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines)
        out += l + "\n";
    return out;
}

/// Lints `text` as the kernel k.cu of a set of its own (every rule that needs no libclang).
inline std::vector<std::string> lint_source(const std::string& text) {
    SourceSet set;
    set.add({"k.cu", "k.cu", text, {}, 0});
    return formatted(lint::lint({&set, {}, {}, nullptr, "not loaded"}));
}

} // namespace kjit::test
