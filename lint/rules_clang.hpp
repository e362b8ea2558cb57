#pragma once
// The rules that read a libclang parse of each kernel, once with its own defaults and once per
// injected define set: KJ002 (injected define never read), KJ004 (knob default disagrees with
// production).

#include "core/diagnostic.hpp"
#include "jit/sources.hpp"
#include "lint/lint.hpp"

#include <string>
#include <vector>

namespace kjit::lint {

/// Runs KJ002 and KJ004 over `files` of `request.sources` with `request.clang` (not null), parsing in
/// parallel; findings go to `out`, what could not be checked to `notes`.
void lint_clang(const LintRequest& request, const std::vector<const SourceFile*>& files,
                std::vector<Diagnostic>& out, std::vector<std::string>& notes);

} // namespace kjit::lint
