#pragma once
// `kjit lint`: source errors NVRTC reports far from their cause, or not at all. The text rules
// need nothing but the source; the others read a libclang parse (tools/libclang.hpp).

#include "jit/sources.hpp"
#include "tools/libclang.hpp"

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

/// A preprocessing token and where it starts (1-based line, 1-based byte column).
struct PpToken {
    std::string text;
    int line = 0;
    int column = 0;
};

/// `#name args...`: one directive over one logical line.
struct Directive {
    std::string name; ///< "define", "if", ...; empty for a null directive
    int line = 0;     ///< of the '#'
    int column = 0;
    int end_line = 0; ///< the physical line its newline is on
    std::vector<PpToken> args;
};

/// The directives of a source and the byte ranges of its comments.
struct ScannedSource {
    std::vector<Directive> directives;
    std::vector<std::pair<std::size_t, std::size_t>> comments; ///< [begin, end), in order
};

/// Lexes `text` as the preprocessor does (splices joined, comments skipped); takes any bytes.
ScannedSource scan(std::string_view text);

/// The preprocessing tokens of `text` (a define's value).
std::vector<std::string> tokenize(std::string_view text);

/// Object-like macros by name: their replacement tokens.
using MacroTable = std::map<std::string, std::vector<std::string>, std::less<>>;

/// The value of an integer constant expression, object-like macros expanded from `macros`;
/// nullopt when the tokens are not one (an unknown name, a float, division by zero).
std::optional<long long> evaluate(std::span<const std::string> tokens, const MacroTable& macros);

/// The candidate closest to `name` by edit distance, or empty when none is close.
std::string nearest(std::string_view name, const std::vector<std::string>& candidates);

/// The rules that need only the text (KJ001, KJ005) over `file`, whose includes resolve in
/// `sources`.
std::vector<Finding> lint_text(const SourceFile& file, const SourceSet& sources);

/// One kernel the engine specializes: a `[[kernel]]` of a shape file with its defines resolved.
struct Injection {
    std::string spec;   ///< the kernel's name ("rms_norm_prefill")
    std::string source; ///< its source kernel ("rms_norm")
    std::string file;   ///< the shape file, as diagnostics print it
    std::map<std::string, std::string> defines;
    std::map<std::string, std::pair<int, int>> where; ///< each define's line and column in `file`
};

/// The kernels of a shape file; ConfigError at file:line:col when it is broken.
std::vector<Injection> load_injections(const std::filesystem::path& shape_file);

/// Every `*.toml` directly in `dir` that parses as a shape file; `skipped` gets a note for
/// each one that does not.
std::vector<Injection> find_injections(const std::filesystem::path& dir,
                                       std::vector<std::string>* skipped = nullptr);

/// Kernel files to lint or list: the set their includes resolve in, the names chosen (empty:
/// all), and the directory whose shape files apply (empty: none).
struct SourceGroup {
    SourceSet sources;
    std::vector<std::string> targets;
    std::filesystem::path dir;
};

/// `paths` (files or directories; `default_dir` when empty) as groups, or the embedded set
/// with `default_dir`'s shape files; ConfigError for a path that is no kernel source.
std::vector<SourceGroup> source_groups(const std::vector<std::string>& paths, bool embedded,
                                       const std::filesystem::path& default_dir);

/// What `lint` checks.
struct LintRequest {
    const SourceSet* sources = nullptr;
    std::vector<std::string> targets; ///< names of the files to lint; empty: every file
    std::vector<Injection> injections;
    const Libclang* clang = nullptr; ///< nullptr: the text rules only
    std::string clang_missing;       ///< why clang is null, for the note that says so
};

/// The findings, sorted by path, line and column, and notes on what was not checked.
struct LintReport {
    std::vector<Finding> findings;
    std::vector<std::string> notes;
    std::size_t files = 0;
};

/// Runs every rule that can run; parses in parallel, one thread per kernel and define set.
LintReport lint(const LintRequest& request);

/// The findings as a JSON array of {path, line, column, severity, rule, message}.
std::string to_json(const std::vector<Finding>& findings);

/// A JSON string literal.
std::string json_string(std::string_view s);

/// Prints the findings (compiler format or JSON) on stdout, notes on stderr and, without
/// json, the line `lint: N file(s), E error(s), W warning(s)`.
void print_report(const LintReport& report, bool json);

} // namespace kjit::lint
