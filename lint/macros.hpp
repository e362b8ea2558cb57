#pragma once
// Macros as the preprocessor keeps them, and their expansion: what `#if` conditions and
// `__launch_bounds__` arguments are read through.

#include "lint/scanner.hpp"

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::lint {

/// One macro definition.
struct Macro {
    bool function_like = false;
    bool variadic = false;           ///< the last parameter is `...` (or `name...`)
    std::vector<std::string> params; ///< `__VA_ARGS__` for a plain `...`
    std::vector<std::string> body;   ///< the replacement list's tokens
    /// Defined, but its replacement is not known: an NVRTC built-in whose value kjit does not
    /// model, or a definition under a condition that could not be evaluated (it may be absent).
    bool opaque = false;
};

/// Macros by name.
using Macros = std::map<std::string, Macro, std::less<>>;

/// The name and macro a `#define` directive defines; nullopt when it names no identifier.
std::optional<std::pair<std::string, Macro>> parse_define(const Directive& d);

/// Stands for a value the expansion could not know (an opaque macro, `__has_builtin(x)`): an
/// expression that needs it is unknown.
inline constexpr std::string_view kUnknownToken = "\x01?";

/// Expands every macro of `tokens` (object-like and function-like, `#` and `##`, each macro
/// disabled inside its own expansion). With `condition` set, the operands of `defined` and of
/// `__has_include` and friends are kept as written, as `#if` does. An opaque macro becomes
/// kUnknownToken; nullopt when the expansion runs over its budget or a call is unterminated.
std::optional<std::vector<std::string>> expand(std::span<const std::string> tokens,
                                               const Macros& macros, bool condition = false);

/// The `#if` reading of `text`: `true` for 1, `false` for 0, nullopt for unknown.
using HasInclude = std::function<std::optional<bool>(const std::string& name, bool angled)>;

/// The value of the condition `tokens` of `#if`/`#elif` with `macros`: `defined`, the
/// alternative tokens (`and`, `not`, ...), `__has_include` through `has_include`, names left
/// after expansion as 0. nullopt when it depends on something unknown (an opaque macro,
/// `__has_builtin`) or is no integer constant expression.
std::optional<long long> evaluate_condition(std::span<const std::string> tokens,
                                            const Macros& macros, const HasInclude& has_include);

/// The operator an alternative token spells (`and` -> `&&`), or empty.
std::string_view alternative_operator(std::string_view token);

/// Whether `name` is one of the `__has_include`-like operators `#if` knows.
bool is_has_operator(std::string_view name);

} // namespace kjit::lint
