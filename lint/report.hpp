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

/// A JSON string literal.
std::string json_string(std::string_view s);

/// Prints the findings (compiler format or JSON) on stdout, notes on stderr and, without
/// json, the line `lint: N file(s), E error(s), W warning(s)`.
void print_report(const LintReport& report, bool json);

} // namespace kjit::lint
