#pragma once
// The rules that need nothing but the text of one source: KJ001 (broken macro continuations),
// KJ005's unbalanced conditionals, KJ006 (byte-order mark), KJ007 (unbalanced #define body),
// KJ009 (a // comment spliced onto the next line), KJ010 (a byte NVRTC takes as end of file).

#include "core/diagnostic.hpp"
#include "jit/sources.hpp"

#include <vector>

namespace kjit::lint {

/// The rules that need only the text of `file` (KJ001, KJ005's conditionals, KJ006, KJ007).
std::vector<Diagnostic> lint_text(const SourceFile& file);

} // namespace kjit::lint
