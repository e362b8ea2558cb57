#pragma once

#include <string>
#include <string_view>

namespace kjit {

/// How bad a diagnostic is, lightest first (so `a < b` means a weighs less).
enum class Severity { note, warning, error };

/// "note", "warning" or "error": the word diagnostics print.
std::string_view severity_name(Severity severity);

/// A place in a file (or another named input) kjit read: 1-based line and column, 0 unknown.
struct SourceLocation {
    std::string path;
    int line = 0;
    int column = 0;
    friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

/// One diagnostic of any part of kjit: compiler logs, config files, the environment, the linter.
struct Diagnostic {
    std::string path; ///< the file, or the environment variable, it is about ("" = none)
    int line = 0;     ///< 1-based; 0 when unknown
    int column = 0;   ///< 1-based; 0 when unknown
    Severity severity = Severity::error;
    std::string message; ///< a sentence, without location or severity
    std::string rule;    ///< the rule that produced it ("KJ001"), or ""
    /// `path:line:col: severity: message [rule]`: col (and line) omitted when 0, ` [rule]`
    /// only with a rule, just `severity: message` without a path.
    [[nodiscard]] std::string format() const;
    friend bool operator==(const Diagnostic&, const Diagnostic&) = default;
};

} // namespace kjit
