#include "lint/rules.hpp"

namespace kjit::lint {

namespace {

const std::vector<Rule> kRules = {
    {"KJ001", Severity::error, false,
     "broken macro continuation: a #define body cut by a missing '\\', a '\\' followed by "
     "whitespace, or a '\\' on the last line"},
    {"KJ002", Severity::error, true,
     "injected define never read: a define a shape file injects for a kernel that its "
     "preprocessed source never tests or expands"},
    {"KJ003", Severity::error, true,
     "condition on an undefined macro: #if/#elif on a name neither defined in the source nor "
     "injected (it silently evaluates to 0)"},
    {"KJ004", Severity::warning, true,
     "knob default disagrees with production: an #ifndef default that matches none of the "
     "values the shape files inject"},
    {"KJ005", Severity::error, false,
     "NVRTC-hostile source: an #include NVRTC cannot find (host headers), unbalanced "
     "#if/#else/#endif"},
};

} // namespace

const std::vector<Rule>& rules() {
    return kRules;
}

} // namespace kjit::lint
