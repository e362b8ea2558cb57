#pragma once
// The linter's rules (`kjit lint --rules`) and what each produces.

#include <string>
#include <string_view>
#include <vector>

namespace kjit::lint {

/// How bad a finding is; both make `kjit lint` exit 1.
enum class Severity { error, warning };

/// One lint diagnostic.
struct Finding {
    std::string path;
    int line = 0;
    int column = 0;
    Severity severity = Severity::error;
    std::string rule; ///< "KJ001"
    std::string message;
    /// `path:line:col: error: message [KJ001]`.
    [[nodiscard]] std::string format() const;
    friend bool operator==(const Finding&, const Finding&) = default;
};

/// A rule: its id, severity, whether it needs libclang, and its one-line doc (`--rules`).
struct Rule {
    std::string_view id;
    Severity severity;
    bool needs_clang;
    std::string_view doc;
};

/// Every rule, in id order.
const std::vector<Rule>& rules();

} // namespace kjit::lint
