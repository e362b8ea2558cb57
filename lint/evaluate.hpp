#pragma once
// Integer constant expressions as `#if` reads them, for the values of knobs and
// `__launch_bounds__` arguments.

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kjit::lint {

/// Object-like macros by name: their replacement tokens.
using MacroTable = std::map<std::string, std::vector<std::string>, std::less<>>;

/// The value of an integer constant expression, object-like macros expanded from `macros`;
/// nullopt when the tokens are not one (an unknown name, a float, division by zero).
std::optional<long long> evaluate(std::span<const std::string> tokens, const MacroTable& macros);

/// The value of `#if` tokens already expanded: names left are 0, kUnknownToken (macros.hpp)
/// makes the value unknown where it matters (`0 && x` is 0 whatever x is); nullopt when unknown
/// or no integer constant expression.
std::optional<long long> evaluate_expanded(std::vector<std::string> tokens);

} // namespace kjit::lint
