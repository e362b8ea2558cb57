#include "lint/rules.hpp"

namespace kjit::lint {

namespace {

const std::vector<Rule> kRules = {
    {"KJ001", Severity::error, false,
     "broken macro continuation: a #define body cut by a missing '\\' (a later line that still "
     "ends in one, a body that stops mid-statement before a deeper-indented line, or, outside "
     "any function, a next line indented as the body, deeper than the namespace's other code, "
     "that reads a parameter of the macro, not as a member's name, and does not declare it), a "
     "'\\' followed by whitespace, or a '\\' on the last line"},
    {"KJ002", Severity::error, true,
     "injected define never read: a define a shape file injects for a kernel that its "
     "preprocessed source never tests or expands, or #defines again with no #if testing the "
     "name around it (the file's value replaces the injected one)"},
    {"KJ003", Severity::error, false,
     "condition on an undefined macro: a live #if/#elif reads a name no macro defines there "
     "(not the source, not an injected define set, not NVRTC, not an included toolkit header; "
     "a #define further down does not count): it silently evaluates to 0"},
    {"KJ004", Severity::warning, true,
     "knob default disagrees with production: an #ifndef default that matches none of the "
     "values the shape files inject"},
    {"KJ005", Severity::error, false,
     "NVRTC-hostile source: a live #include NVRTC cannot find (looked up as the compiler does: "
     "kernel sources by the name as written, then the toolkit's headers) or cannot compile, "
     "unbalanced #if/#else/#endif"},
    {"KJ006", Severity::error, false,
     "byte-order mark: the file starts with a UTF-8 BOM, which NVRTC rejects as an "
     "unrecognized token"},
    {"KJ007", Severity::error, false,
     "unbalanced #define body: its parentheses or brackets (braces, in a multi-line body) do "
     "not balance, usually a line continuation '\\' missing before the body's last line"},
    {"KJ008", Severity::error, false,
     "#if compares two names neither of which is a macro (`#if MODE == MODE_FAST` with enum "
     "values): both are 0 to the preprocessor, so the comparison never depends on them"},
    {"KJ009", Severity::error, false,
     "a `//` comment that ends with '\\' (a Windows path, an ASCII drawing) splices the next "
     "line into the comment: that line of code is never compiled, and nothing says so"},
    {"KJ010", Severity::error, false,
     "a byte 0xFF (a Latin-1 'ÿ', a stray binary byte): NVRTC reads it as the end of the file "
     "and compiles only what comes before it, the kernels after it silently gone"},
};

} // namespace

const std::vector<Rule>& rules() {
    return kRules;
}

} // namespace kjit::lint
