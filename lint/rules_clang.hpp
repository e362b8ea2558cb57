#pragma once
// The rules that read a libclang parse of each kernel, once with its own defaults and once per
// injected define set: KJ002 (injected define never read), KJ003 (condition on an undefined
// macro), KJ004 (knob default disagrees with production).

#include "jit/sources.hpp"
#include "lint/lint.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kjit::lint {

/// Runs KJ002-KJ004 over `files` of `request.sources` with `request.clang` (not null), parsing in
/// parallel; findings go to `out`, what could not be checked to `notes`.
void lint_clang(const LintRequest& request, const std::vector<const SourceFile*>& files,
                std::vector<Finding>& out, std::vector<std::string>& notes);

/// The candidate closest to `name` by edit distance, or empty when none is close.
std::string nearest(std::string_view name, const std::vector<std::string>& candidates);

} // namespace kjit::lint
