#pragma once
// A lint report as `kjit lint` prints it: compiler-format lines or JSON.

#include "core/diagnostic.hpp"
#include "lint/lint.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kjit::lint {

/// The findings as a JSON array of {path, line, column, severity, rule, message}.
std::string to_json(const std::vector<Diagnostic>& findings);

/// What `kjit lint` prints on stdout: the findings as JSON, or one compiler-format line each
/// (`path:line:col: error: message [KJ001]`) and then `lint: N file(s), E error(s), W
/// warning(s)`. Every line ends in a newline. The library prints nothing itself.
std::string format_report(const LintReport& report, bool json);

/// What the lint verbs print on stderr before the report: `kjit lint: note: NOTE` per note.
std::string format_notes(const std::vector<std::string>& notes);

} // namespace kjit::lint
