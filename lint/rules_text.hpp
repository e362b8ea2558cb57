#pragma once
// The rules that need nothing but the text of a source: KJ001 (broken macro continuations)
// and KJ005 (NVRTC-hostile includes, unbalanced conditionals).

#include "core/diagnostic.hpp"
#include "jit/sources.hpp"

#include <vector>

namespace kjit::lint {

/// The rules that need only the text (KJ001, KJ005) over `file`, whose includes resolve in
/// `sources`.
std::vector<Diagnostic> lint_text(const SourceFile& file, const SourceSet& sources);

} // namespace kjit::lint
