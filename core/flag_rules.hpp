#pragma once
// Shared by core/flags.cpp and core/flags_toml.cpp: how flag values parse and which declarations
// are refused. Not part of kjit's public API.

#include "core/flags.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::detail {

/// `s` in upper case (ASCII).
std::string upper(std::string_view s);
/// Case-insensitive equality (ASCII).
bool iequals(std::string_view a, std::string_view b);
/// Case-insensitive prefix test (ASCII).
bool istarts_with(std::string_view s, std::string_view prefix);
/// A C identifier.
bool is_identifier(std::string_view s);
/// Upper-case letters, digits and '_', not starting with a digit: what a declared name may be.
bool is_flag_name(std::string_view s);
/// `'v'`.
std::string quoted_value(std::string_view v);
/// An integer flag's range: "0..1024", ">= 1", "<= 9", or "".
std::string range_text(const FlagSpec& spec);

/// A value parsed in a flag's syntax.
struct Parsed {
    std::optional<std::string> value; ///< canonical, when the text parsed
    std::string problem;              ///< "is not a boolean; accepted values: ..." otherwise
};

/// Parses `text` as a value of `spec`.
Parsed parse_value(const FlagSpec& spec, std::string_view text);

/// A problem with a declaration and the key of the declaration it is about.
struct SpecProblem {
    std::string message;
    std::string key;
};

/// Why `spec` cannot be declared beside `declared` under `prefixes`, or nullopt.
std::optional<SpecProblem> check_spec(const FlagSpec& spec,
                                      const std::vector<std::pair<std::string, Severity>>& prefixes,
                                      const std::vector<FlagSpec>& declared);

/// Fills an empty default with the type's natural one (false, 0, the first choice).
void fill_default(FlagSpec& spec);

/// Why `rule` cannot be added, or nullopt; canonicalizes its value.
std::optional<SpecProblem> check_rule(TierRule& rule, const std::vector<FlagSpec>& declared);

} // namespace kjit::detail
