#pragma once
// The rules that read the directives the preprocessor reaches, walked as NVRTC walks them
// (lint/preprocess.hpp) once per kernel, define set and target architecture: KJ003 (condition
// on an undefined macro), KJ005's includes NVRTC cannot find or compile, KJ008 (#if comparing
// two names neither of which is a macro).

#include "core/diagnostic.hpp"
#include "lint/lint.hpp"

#include <set>
#include <string>
#include <vector>

namespace kjit::lint {

/// Runs KJ003, KJ005 (includes) and KJ008 over `files` of `request.sources` and the headers
/// they include, walking in parallel; findings go to `out`. Returns the set names of the files
/// the walks reached: `files` and every file of the set they include.
std::set<std::string> lint_walks(const LintRequest& request,
                                 const std::vector<const SourceFile*>& files,
                                 std::vector<Diagnostic>& out);

} // namespace kjit::lint
