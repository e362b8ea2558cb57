#pragma once
// JSON text written by hand (the verbs' --json outputs, sweep.json): one escaping rule for all.

#include <string>
#include <string_view>

namespace kjit {

/// A JSON string literal of `s`: quotes and backslashes escaped, control characters (a compile
/// log's tabs and carriage returns too) as escapes.
std::string json_string(std::string_view s);

} // namespace kjit
