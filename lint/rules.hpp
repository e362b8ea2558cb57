#pragma once
// The linter's rules (`kjit lint --rules`).

#include "core/diagnostic.hpp"

#include <string_view>
#include <vector>

namespace kjit::lint {

/// A rule: its id, severity, whether it needs libclang, and its one-line doc (`--rules`). A
/// finding is a kjit::Diagnostic whose `rule` is the id; errors and warnings both make
/// `kjit lint` exit 1.
struct Rule {
    std::string_view id;
    Severity severity;
    bool needs_clang;
    std::string_view doc;
};

/// Every rule, in id order.
const std::vector<Rule>& rules();

} // namespace kjit::lint
