#include "core/flag_rules.hpp"

#include "core/names.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace kjit::detail {

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

bool iequals(std::string_view a, std::string_view b) {
    return upper(a) == upper(b);
}

bool istarts_with(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bool is_identifier(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

bool is_flag_name(std::string_view s) {
    return is_identifier(s) && std::none_of(s.begin(), s.end(), [](char c) {
               return std::islower(static_cast<unsigned char>(c));
           });
}

namespace {

constexpr std::string_view kBoolAccepted = "1, 0, true, false, on, off, yes, no";

std::optional<bool> parse_bool(std::string_view text) {
    const std::string u = upper(text);
    if (u == "1" || u == "TRUE" || u == "ON" || u == "YES")
        return true;
    if (u == "0" || u == "FALSE" || u == "OFF" || u == "NO")
        return false;
    return std::nullopt;
}

} // namespace

std::string range_text(const FlagSpec& spec) {
    constexpr auto lo = std::numeric_limits<std::int64_t>::min();
    constexpr auto hi = std::numeric_limits<std::int64_t>::max();
    if (spec.min != lo && spec.max != hi)
        return std::to_string(spec.min) + ".." + std::to_string(spec.max);
    if (spec.min != lo)
        return ">= " + std::to_string(spec.min);
    if (spec.max != hi)
        return "<= " + std::to_string(spec.max);
    return {};
}

namespace {
std::string accepted_text(const FlagSpec& spec) {
    switch (spec.type) {
    case FlagType::boolean:
        return std::string(kBoolAccepted);
    case FlagType::integer: {
        const std::string r = range_text(spec);
        return r.empty() ? "integers" : "integers " + r;
    }
    case FlagType::enumeration:
        return join(spec.choices, ", ");
    case FlagType::string:
        break;
    }
    return "any text";
}
} // namespace

Parsed parse_value(const FlagSpec& spec, std::string_view text) {
    const std::string accepted = "; accepted values: " + accepted_text(spec);
    switch (spec.type) {
    case FlagType::boolean:
        if (auto b = parse_bool(text))
            return {*b ? "true" : "false", {}};
        return {std::nullopt, "is not a boolean" + accepted};
    case FlagType::integer: {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec == std::errc::invalid_argument || ptr != end)
            return {std::nullopt, "is not an integer" + accepted};
        if (ec == std::errc::result_out_of_range || v < spec.min || v > spec.max)
            return {std::nullopt, "is out of range" + accepted};
        return {std::to_string(v), {}};
    }
    case FlagType::enumeration:
        for (const auto& c : spec.choices)
            if (iequals(c, text))
                return {c, {}};
        return {std::nullopt, "is not an accepted value" + accepted +
                                  did_you_mean(nearest(text, spec.choices, 0))};
    case FlagType::string:
        break;
    }
    return {std::string(text), {}};
}

std::string quoted_value(std::string_view v) {
    return "'" + std::string(v) + "'";
}

std::optional<SpecProblem> check_spec(const FlagSpec& spec,
                                      const std::vector<std::pair<std::string, Severity>>& prefixes,
                                      const std::vector<FlagSpec>& declared) {
    if (!is_flag_name(spec.name))
        return SpecProblem{"flag name " + quoted_value(spec.name) +
                               " must be upper-case letters, digits and '_'",
                           "name"};
    bool under = false;
    std::vector<std::string> names;
    for (const auto& [p, severity] : prefixes) {
        under = under || spec.name.starts_with(p);
        names.push_back(p);
    }
    if (!under)
        return SpecProblem{"flag " + spec.name + " is not under a registered prefix (registered: " +
                               (names.empty() ? "none" : join(names, ", ")) + ")",
                           "name"};
    for (const auto& d : declared) {
        if (d.name == spec.name)
            return SpecProblem{"flag " + spec.name + " is declared twice", "name"};
        if (!spec.define.empty() && d.define == spec.define)
            return SpecProblem{"flag " + spec.name + " injects define " + spec.define + ", which " +
                                   d.name + " already injects",
                               "define"};
    }
    if (!spec.define.empty() && !is_identifier(spec.define))
        return SpecProblem{"define " + quoted_value(spec.define) + " of flag " + spec.name +
                               " is not a C identifier",
                           "define"};
    if (spec.type == FlagType::integer && spec.min > spec.max)
        return SpecProblem{"flag " + spec.name + " has min " + std::to_string(spec.min) +
                               " above max " + std::to_string(spec.max),
                           "min"};
    if (spec.type == FlagType::enumeration) {
        if (spec.choices.empty())
            return SpecProblem{"enum flag " + spec.name + " declares no choices", "choices"};
        for (std::size_t i = 0; i < spec.choices.size(); ++i) {
            if (spec.choices[i].empty())
                return SpecProblem{"enum flag " + spec.name + " has an empty choice", "choices"};
            for (std::size_t j = 0; j < i; ++j)
                if (iequals(spec.choices[i], spec.choices[j]))
                    return SpecProblem{"enum flag " + spec.name + " lists choice " +
                                           spec.choices[i] + " twice",
                                       "choices"};
        }
    }
    if (spec.type != FlagType::integer && (spec.min != std::numeric_limits<std::int64_t>::min() ||
                                           spec.max != std::numeric_limits<std::int64_t>::max()))
        return SpecProblem{"flag " + spec.name + " has a range but is not an int", "min"};
    if (spec.type != FlagType::enumeration && !spec.choices.empty())
        return SpecProblem{"flag " + spec.name + " has choices but is not an enum", "choices"};
    for (const auto& r : spec.requires_)
        if (r == spec.name)
            return SpecProblem{"flag " + spec.name + " requires itself", "requires"};
    const Parsed p = parse_value(spec, spec.default_value);
    if (!p.value)
        return SpecProblem{"default " + quoted_value(spec.default_value) + " of flag " + spec.name +
                               " " + p.problem,
                           "default"};
    return std::nullopt;
}

void fill_default(FlagSpec& spec) {
    if (!spec.default_value.empty())
        return;
    if (spec.type == FlagType::boolean)
        spec.default_value = "false";
    else if (spec.type == FlagType::integer)
        spec.default_value = "0";
    else if (spec.type == FlagType::enumeration && !spec.choices.empty())
        spec.default_value = spec.choices.front();
}

std::optional<SpecProblem> check_rule(TierRule& rule, const std::vector<FlagSpec>& declared) {
    const FlagSpec* spec = nullptr;
    for (const auto& d : declared)
        if (d.name == rule.flag)
            spec = &d;
    if (!spec)
        return SpecProblem{"tier rule names " + quoted_value(rule.flag) +
                               ", which is not a declared flag",
                           "flag"};
    if (rule.tag.empty() || rule.tag.find_first_of("+= \t\n") != std::string::npos)
        return SpecProblem{"tier tag " + quoted_value(rule.tag) +
                               " must be non-empty, without '+', '=' or spaces",
                           "tag"};
    if (rule.value.empty() && spec->type == FlagType::boolean)
        rule.value = "true";
    else if (rule.value.empty() && spec->type != FlagType::string)
        return SpecProblem{"tier rule on " + std::string(flag_type_name(spec->type)) + " flag " +
                               spec->name + " needs a value",
                           "value"};
    const Parsed p = parse_value(*spec, rule.value);
    if (!p.value)
        return SpecProblem{"tier value " + quoted_value(rule.value) + " of flag " + spec->name +
                               " " + p.problem,
                           "value"};
    rule.value = *p.value;
    return std::nullopt;
}

} // namespace kjit::detail
