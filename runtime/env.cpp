#include "runtime/env.hpp"

#include "jit/names.hpp"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace kjit {

namespace {

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

/// Upper-case letters, digits and '_', not starting with a digit: what a declared name may be.
bool is_flag_name(std::string_view s) {
    return is_identifier(s) && std::none_of(s.begin(), s.end(), [](char c) {
               return std::islower(static_cast<unsigned char>(c));
           });
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : std::string(sep)) + p;
    return out;
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == '_') {
            if (!cur.empty())
                out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty())
        out.push_back(std::move(cur));
    return out;
}

/// Edit distance over words: a word costs its own edit distance to the word it is aligned
/// with, or 1 when it abbreviates a run of two or more words by their initials (BI for
/// BATCH_INVARIANT, TC for TENSOR_CORES), so a name that swaps spelled-out and abbreviated
/// words is still found near the one meant.
std::size_t word_distance(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
    // A word inserted or dropped costs its letters and its '_'.
    for (std::size_t i = 1; i <= n; ++i)
        d[i][0] = d[i - 1][0] + a[i - 1].size() + 1;
    for (std::size_t j = 1; j <= m; ++j)
        d[0][j] = d[0][j - 1] + b[j - 1].size() + 1;
    auto initials = [](const std::vector<std::string>& w, std::size_t from, std::size_t to) {
        std::string s;
        for (std::size_t k = from; k < to; ++k)
            s += w[k][0];
        return s;
    };
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            std::size_t best =
                std::min({d[i - 1][j] + a[i - 1].size() + 1, d[i][j - 1] + b[j - 1].size() + 1,
                          d[i - 1][j - 1] + edit_distance(a[i - 1], b[j - 1])});
            for (std::size_t k = 2; k <= j; ++k)
                if (a[i - 1] == initials(b, j - k, j))
                    best = std::min(best, d[i - 1][j - k] + 1);
            for (std::size_t k = 2; k <= i; ++k)
                if (b[j - 1] == initials(a, i - k, i))
                    best = std::min(best, d[i - k][j - 1] + 1);
            d[i][j] = best;
        }
    return d[n][m];
}

std::size_t name_distance(std::string_view a, std::string_view b) {
    const std::string ua = upper(a), ub = upper(b);
    return std::min(edit_distance(ua, ub), word_distance(words(ua), words(ub)));
}

/// The closest candidates to `typed` (ties all named), or none when nothing is close: within
/// max(3, a third of the name after the prefix) and short of rewriting the whole name.
std::vector<std::string> nearest(std::string_view typed, const std::vector<std::string>& candidates,
                                 std::size_t prefix_len) {
    const std::string_view suffix = typed.substr(std::min(prefix_len, typed.size()));
    const std::size_t limit = std::max<std::size_t>(3, suffix.size() / 3);
    std::size_t best = limit + 1;
    std::vector<std::string> out;
    for (const auto& c : candidates) {
        const std::string_view other = std::string_view(c).substr(prefix_len);
        const std::size_t dist = name_distance(suffix, other);
        if (dist >= std::max(suffix.size(), other.size()))
            continue;
        if (dist < best) {
            best = dist;
            out.clear();
        }
        if (dist == best)
            out.push_back(c);
    }
    return out;
}

std::string did_you_mean(const std::vector<std::string>& names) {
    if (names.empty())
        return {};
    std::string s = "; did you mean " + names[0];
    for (std::size_t i = 1; i < names.size(); ++i)
        s += (i + 1 == names.size() ? " or " : ", ") + names[i];
    return s + "?";
}

constexpr std::string_view kBoolAccepted = "1, 0, true, false, on, off, yes, no";

std::optional<bool> parse_bool(std::string_view text) {
    const std::string u = upper(text);
    if (u == "1" || u == "TRUE" || u == "ON" || u == "YES")
        return true;
    if (u == "0" || u == "FALSE" || u == "OFF" || u == "NO")
        return false;
    return std::nullopt;
}

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

struct Parsed {
    std::optional<std::string> value; ///< canonical, when the text parsed
    std::string problem;              ///< "is not a boolean; accepted values: ..." otherwise
};

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

/// A problem with a declaration and the key of the declaration it is about.
struct SpecProblem {
    std::string message;
    std::string key;
};

std::string quoted_value(std::string_view v) {
    return "'" + std::string(v) + "'";
}

const std::pair<std::string, Severity>*
prefix_of(const std::vector<std::pair<std::string, Severity>>& prefixes, std::string_view name) {
    const std::pair<std::string, Severity>* best = nullptr;
    for (const auto& p : prefixes)
        if (istarts_with(name, p.first) && (!best || p.first.size() > best->first.size()))
            best = &p;
    return best;
}

/// A boolean that is true, or another flag set in the environment to a non-empty value.
bool is_on(const ResolvedFlag& f) {
    if (f.spec.type == FlagType::boolean)
        return f.value == "true";
    return f.source == FlagSource::environment && !f.value.empty();
}

std::string flag_error_message(const std::vector<FlagDiagnostic>& diagnostics) {
    std::size_t errors = 0;
    for (const auto& d : diagnostics)
        errors += d.severity == Severity::error;
    if (diagnostics.size() == 1)
        return diagnostics[0].message;
    std::string msg = std::to_string(errors) + " error(s) in the environment flags:";
    for (const auto& d : diagnostics)
        msg += std::string("\n  ") + (d.severity == Severity::error ? "error: " : "warning: ") +
               d.message;
    return msg;
}

} // namespace

Environment process_environment() {
    Environment env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        const auto eq = entry.find('=');
        if (eq != std::string_view::npos)
            env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
    return env;
}

std::string_view flag_type_name(FlagType type) {
    switch (type) {
    case FlagType::boolean:
        return "bool";
    case FlagType::integer:
        return "int";
    case FlagType::enumeration:
        return "enum";
    case FlagType::string:
        break;
    }
    return "string";
}

FlagError::FlagError(std::vector<FlagDiagnostic> diagnostics_)
    : ConfigError(flag_error_message(diagnostics_)), diagnostics(std::move(diagnostics_)) {}

const ResolvedFlag& ResolvedFlags::find(std::string_view name) const {
    for (const auto& f : flags_)
        if (f.spec.name == name)
            return f;
    throw NotFoundError("environment flag " + std::string(name) + " is not declared");
}

bool ResolvedFlags::get_bool(std::string_view name) const {
    const ResolvedFlag& f = find(name);
    if (f.spec.type != FlagType::boolean)
        throw ConfigError("environment flag " + f.spec.name + " is a " +
                          std::string(flag_type_name(f.spec.type)) + ", not a bool");
    return f.value == "true";
}

std::int64_t ResolvedFlags::get_int(std::string_view name) const {
    const ResolvedFlag& f = find(name);
    if (f.spec.type != FlagType::integer)
        throw ConfigError("environment flag " + f.spec.name + " is a " +
                          std::string(flag_type_name(f.spec.type)) + ", not an int");
    return std::stoll(f.value);
}

const std::string& ResolvedFlags::get_string(std::string_view name) const {
    const ResolvedFlag& f = find(name);
    if (f.spec.type != FlagType::string && f.spec.type != FlagType::enumeration)
        throw ConfigError("environment flag " + f.spec.name + " is a " +
                          std::string(flag_type_name(f.spec.type)) + ", not a string or enum");
    return f.value;
}

FlagSource ResolvedFlags::source(std::string_view name) const {
    return find(name).source;
}

std::map<std::string, std::string> ResolvedFlags::defines() const {
    std::map<std::string, std::string> out;
    for (const auto& f : flags_) {
        if (f.spec.define.empty())
            continue;
        if (f.spec.type == FlagType::boolean)
            out[f.spec.define] = f.value == "true" ? "1" : "0";
        else
            out[f.spec.define] = f.value;
    }
    return out;
}

void ResolvedFlags::apply_to(CompileOptions& options) const {
    for (const auto& [name, value] : defines()) {
        auto it = options.defines.find(name);
        if (it != options.defines.end() && it->second != value)
            throw ConfigError("define " + name + "=" + value +
                              " from an environment flag conflicts with " + name + "=" +
                              it->second + " already in the compile options");
        options.defines[name] = value;
    }
}

namespace {
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

/// Fills an empty default with the type's natural one (false, 0, the first choice).
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
} // namespace

void FlagRegistry::add_prefix(std::string prefix, Severity unknown) {
    if (!is_flag_name(prefix))
        throw ConfigError("flag prefix " + quoted_value(prefix) +
                          " must be upper-case letters, digits and '_'");
    for (auto& p : prefixes_)
        if (p.first == prefix) {
            p.second = unknown;
            return;
        }
    prefixes_.emplace_back(std::move(prefix), unknown);
}

void FlagRegistry::declare(FlagSpec spec) {
    fill_default(spec);
    if (auto problem = check_spec(spec, prefixes_, flags_))
        throw ConfigError(problem->message);
    spec.default_value = *parse_value(spec, spec.default_value).value;
    flags_.push_back(std::move(spec));
}

void FlagRegistry::add_tier_rule(TierRule rule) {
    if (auto problem = check_rule(rule, flags_))
        throw ConfigError(problem->message);
    tier_rules_.push_back(std::move(rule));
}

void FlagRegistry::set_tier_default(std::string tier) {
    tier_default_ = std::move(tier);
}

const FlagSpec* FlagRegistry::find(std::string_view name) const {
    for (const auto& f : flags_)
        if (f.name == name)
            return &f;
    return nullptr;
}

void FlagRegistry::check_requires() const {
    for (const auto& f : flags_)
        for (const auto& r : f.requires_)
            if (!find(r))
                throw ConfigError("flag " + f.name + " requires " + r +
                                  ", which is not a declared flag");
}

std::vector<std::string> FlagRegistry::restore_set(const Environment& env) const {
    std::vector<std::string> out;
    for (const auto& [name, value] : env)
        if (prefix_of(prefixes_, name))
            out.push_back(name);
    return out;
}

ResolvedFlags FlagRegistry::resolve() const {
    return resolve(process_environment());
}

ResolvedFlags FlagRegistry::resolve(const Environment& env) const {
    check_requires();
    std::vector<FlagDiagnostic> diagnostics;
    ResolvedFlags out;
    out.restore_set_ = restore_set(env);

    for (const auto& name : out.restore_set_) {
        if (find(name))
            continue;
        const auto* prefix = prefix_of(prefixes_, name);
        std::vector<std::string> candidates;
        for (const auto& f : flags_)
            if (prefix_of(prefixes_, f.name) == prefix)
                candidates.push_back(f.name);
        std::string message = name + " is not a declared flag";
        const auto near = nearest(name, candidates, prefix->first.size());
        if (!near.empty())
            message += did_you_mean(near);
        else if (candidates.empty())
            message += " (no flags are declared under " + prefix->first + ")";
        else
            message += " (declared under " + prefix->first + ": " + join(candidates, ", ") + ")";
        diagnostics.push_back({prefix->second, name, std::move(message)});
    }

    std::vector<bool> parsed_ok;
    for (const auto& spec : flags_) {
        ResolvedFlag r{spec, spec.default_value, FlagSource::default_value};
        bool ok = true;
        if (auto it = env.find(spec.name); it != env.end()) {
            r.source = FlagSource::environment;
            const Parsed p = parse_value(spec, it->second);
            if (p.value) {
                r.value = *p.value;
            } else {
                ok = false;
                diagnostics.push_back(
                    {Severity::error, spec.name, spec.name + "=" + it->second + " " + p.problem});
            }
        }
        out.flags_.push_back(std::move(r));
        parsed_ok.push_back(ok);
    }

    for (std::size_t i = 0; i < out.flags_.size(); ++i) {
        const ResolvedFlag& f = out.flags_[i];
        if (!parsed_ok[i] || !is_on(f))
            continue;
        for (const auto& req : f.spec.requires_) {
            const auto& rf = out.find(req);
            if (is_on(rf))
                continue;
            const bool set = rf.source == FlagSource::environment;
            diagnostics.push_back(
                {Severity::error, f.spec.name,
                 f.spec.name + " requires " + req + ", which is " +
                     (set ? "set to " + quoted_value(env.at(req)) : std::string("not set"))});
        }
    }

    std::vector<std::string> tags;
    for (const auto& rule : tier_rules_)
        if (out.find(rule.flag).value == rule.value &&
            std::find(tags.begin(), tags.end(), rule.tag) == tags.end())
            tags.push_back(rule.tag);
    out.tier_ = tags.empty() ? tier_default_ : join(tags, "+");

    const bool failed = std::any_of(diagnostics.begin(), diagnostics.end(),
                                    [](const auto& d) { return d.severity == Severity::error; });
    if (failed)
        throw FlagError(std::move(diagnostics));
    out.warnings_ = std::move(diagnostics);
    return out;
}

std::string flag_type_text(const FlagSpec& spec) {
    std::string t(flag_type_name(spec.type));
    if (spec.type == FlagType::integer) {
        const std::string r = range_text(spec);
        if (!r.empty())
            t += " " + r;
    } else if (spec.type == FlagType::enumeration) {
        t += " " + join(spec.choices, "|");
    }
    return t;
}

namespace {
std::string markdown_cell(std::string s) {
    std::string out;
    for (char c : s)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}
} // namespace

std::string FlagRegistry::markdown() const {
    std::ostringstream os;
    os << "| flag | type | default | what it does |\n|---|---|---|---|\n";
    for (const auto& f : flags_) {
        std::string doc = f.doc;
        if (!f.requires_.empty()) {
            std::vector<std::string> names;
            for (const auto& r : f.requires_)
                names.push_back("`" + r + "`");
            doc += (doc.empty() ? "" : "; ") + std::string("requires ") + join(names, ", ");
        }
        if (!f.define.empty())
            doc += (doc.empty() ? "" : "; ") + std::string("compiles with `-D") + f.define + "`";
        os << "| `" << f.name << "` | " << markdown_cell(flag_type_text(f)) << " | "
           << (f.default_value.empty() ? "(empty)" : "`" + markdown_cell(f.default_value) + "`")
           << " | " << markdown_cell(doc) << " |\n";
    }
    return os.str();
}

namespace {

/// Reads one flags file into a registry; every error carries the file, line and column.
class TomlLoader {
  public:
    TomlLoader(FlagRegistry& registry, std::string file) : reg_(registry), file_(std::move(file)) {}

    void load(std::string_view text) {
        toml::table root;
        try {
            root = toml::parse(text, file_);
        } catch (const toml::parse_error& e) {
            throw ConfigError(std::string(e.description()), file_,
                              static_cast<int>(e.source().begin.line),
                              static_cast<int>(e.source().begin.column));
        }
        only_keys(root, {"prefix", "unknown", "tier_default", "flag", "tier"});
        Severity unknown = Severity::error;
        if (const toml::node* n = root.get("unknown")) {
            const std::string u = string_of(*n, "unknown");
            if (u == "warning")
                unknown = Severity::warning;
            else if (u != "error")
                fail(*n, "unknown must be \"error\" or \"warning\", not " + quoted_value(u));
        }
        if (const toml::node* n = root.get("prefix")) {
            try {
                reg_.add_prefix(string_of(*n, "prefix"), unknown);
            } catch (const ConfigError&) {
                fail(*n, "prefix must be upper-case letters, digits and '_'");
            }
        } else if (root.contains("unknown")) {
            fail(*root.get("unknown"), "unknown is set but no prefix is");
        }
        if (const toml::node* n = root.get("tier_default"))
            reg_.set_tier_default(string_of(*n, "tier_default"));
        if (const toml::node* n = root.get("flag"))
            for (const toml::node& item : array_of(*n, "flag"))
                load_flag(table_of(item, "flag"));
        check_requires();
        if (const toml::node* n = root.get("tier"))
            for (const toml::node& item : array_of(*n, "tier"))
                load_rule(table_of(item, "tier"));
    }

  private:
    [[noreturn]] void fail(const toml::source_region& where, const std::string& message) const {
        throw ConfigError(message, file_, static_cast<int>(where.begin.line),
                          static_cast<int>(where.begin.column));
    }
    [[noreturn]] void fail(const toml::node& where, const std::string& message) const {
        fail(where.source(), message);
    }

    void only_keys(const toml::table& t, std::initializer_list<std::string_view> allowed) const {
        for (auto&& [key, value] : t)
            if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
                const std::vector<std::string> names(allowed.begin(), allowed.end());
                const auto near = nearest(key.str(), names, 0);
                fail(key.source(), "unknown key " + quoted_value(key.str()) +
                                       (near.empty() ? " (known keys: " + join(names, ", ") + ")"
                                                     : did_you_mean(near)));
            }
    }

    std::string string_of(const toml::node& n, std::string_view key) const {
        if (const auto* s = n.as_string())
            return s->get();
        fail(n, std::string(key) + " must be a string");
    }

    const toml::array& array_of(const toml::node& n, std::string_view key) const {
        if (const auto* a = n.as_array())
            return *a;
        fail(n, std::string(key) + " must be an array of tables ([[" + std::string(key) + "]])");
    }

    const toml::table& table_of(const toml::node& n, std::string_view key) const {
        if (const auto* t = n.as_table())
            return *t;
        fail(n, "each " + std::string(key) + " must be a table ([[" + std::string(key) + "]])");
    }

    std::vector<std::string> strings_of(const toml::node& n, std::string_view key) const {
        const auto* a = n.as_array();
        if (!a)
            fail(n, std::string(key) + " must be an array of strings");
        std::vector<std::string> out;
        for (const toml::node& item : *a)
            out.push_back(string_of(item, key));
        return out;
    }

    std::int64_t int_of(const toml::node& n, std::string_view key) const {
        if (const auto* i = n.as_integer())
            return i->get();
        fail(n, std::string(key) + " must be an integer");
    }

    /// A default or tier value: a TOML bool, integer or string, as flag syntax.
    std::string scalar_of(const toml::node& n, std::string_view key) const {
        if (const auto* b = n.as_boolean())
            return b->get() ? "true" : "false";
        if (const auto* i = n.as_integer())
            return std::to_string(i->get());
        if (const auto* s = n.as_string())
            return s->get();
        fail(n, std::string(key) + " must be a boolean, an integer or a string");
    }

    void load_flag(const toml::table& t) {
        only_keys(
            t, {"name", "type", "default", "doc", "min", "max", "choices", "requires", "define"});
        FlagSpec spec;
        const toml::node* name = t.get("name");
        if (!name)
            fail(t, "a [[flag]] needs a name");
        spec.name = string_of(*name, "name");
        const toml::node* type = t.get("type");
        if (!type)
            fail(t, "flag " + spec.name + " needs a type (bool, int, enum or string)");
        const std::string ty = string_of(*type, "type");
        if (ty == "bool")
            spec.type = FlagType::boolean;
        else if (ty == "int")
            spec.type = FlagType::integer;
        else if (ty == "enum")
            spec.type = FlagType::enumeration;
        else if (ty == "string")
            spec.type = FlagType::string;
        else
            fail(*type, "type " + quoted_value(ty) + " is not one of bool, int, enum, string");
        if (const toml::node* n = t.get("default")) {
            const bool fits = spec.type == FlagType::boolean   ? n->is_boolean()
                              : spec.type == FlagType::integer ? n->is_integer()
                                                               : n->is_string();
            if (!fits)
                fail(*n, "default of " + ty + " flag " + spec.name + " must be " +
                             (spec.type == FlagType::boolean   ? "true or false"
                              : spec.type == FlagType::integer ? "an integer"
                                                               : "a string"));
            spec.default_value = scalar_of(*n, "default");
        }
        if (const toml::node* n = t.get("doc"))
            spec.doc = string_of(*n, "doc");
        if (const toml::node* n = t.get("min"))
            spec.min = int_of(*n, "min");
        if (const toml::node* n = t.get("max"))
            spec.max = int_of(*n, "max");
        if (const toml::node* n = t.get("choices"))
            spec.choices = strings_of(*n, "choices");
        if (const toml::node* n = t.get("requires")) {
            spec.requires_ = strings_of(*n, "requires");
            for (const toml::node& item : *n->as_array())
                requires_.push_back({spec.name, *item.value<std::string>(), item.source()});
        }
        if (const toml::node* n = t.get("define"))
            spec.define = string_of(*n, "define");
        try {
            fill_default(spec);
            if (auto problem = check_spec(spec, reg_.prefixes(), reg_.flags())) {
                const toml::node* at = t.get(problem->key);
                fail(at ? at->source() : t.source(), problem->message);
            }
            reg_.declare(std::move(spec));
        } catch (const ConfigError& e) {
            if (!e.file.empty())
                throw;
            fail(t, e.what());
        }
    }

    void check_requires() const {
        for (const auto& [flag, required, where] : requires_)
            if (!reg_.find(required))
                fail(where, "flag " + flag + " requires " + quoted_value(required) +
                                ", which is not a declared flag" +
                                did_you_mean(nearest(required, names(), 0)));
    }

    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& f : reg_.flags())
            out.push_back(f.name);
        return out;
    }

    void load_rule(const toml::table& t) {
        only_keys(t, {"flag", "value", "tag"});
        TierRule rule;
        if (const toml::node* n = t.get("flag"))
            rule.flag = string_of(*n, "flag");
        else
            fail(t, "a [[tier]] needs a flag");
        if (const toml::node* n = t.get("tag"))
            rule.tag = string_of(*n, "tag");
        else
            fail(t, "a [[tier]] needs a tag");
        if (const toml::node* n = t.get("value"))
            rule.value = scalar_of(*n, "value");
        TierRule checked = rule;
        if (auto problem = check_rule(checked, reg_.flags())) {
            const toml::node* at = t.get(problem->key);
            std::string message = problem->message;
            if (problem->key == "flag")
                message += did_you_mean(nearest(rule.flag, names(), 0));
            fail(at ? at->source() : t.source(), message);
        }
        reg_.add_tier_rule(std::move(rule));
    }

    FlagRegistry& reg_;
    std::string file_;
    struct Requirement {
        std::string flag, required;
        toml::source_region where;
    };
    std::vector<Requirement> requires_;
};

} // namespace

void FlagRegistry::load_toml_text(std::string_view text, const std::string& source_name) {
    FlagRegistry next = *this; // a file with a mistake leaves the registry as it was
    TomlLoader(next, source_name).load(text);
    *this = std::move(next);
}

void FlagRegistry::load_toml(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw ConfigError("cannot read flags file", file.string());
    std::ostringstream text;
    text << in.rdbuf();
    load_toml_text(text.str(), file.string());
}

FlagRegistry builtin_flags() {
    FlagRegistry r;
    r.add_prefix("KJIT_");
    auto flag = [&](std::string_view name, FlagType type, std::string def, std::string doc) {
        FlagSpec s;
        s.name = name;
        s.type = type;
        s.default_value = std::move(def);
        s.doc = std::move(doc);
        return s;
    };
    r.declare(flag(kFlagDriverLibrary, FlagType::string, "libcuda.so.1",
                   "the CUDA driver library to open with dlopen"));
    r.declare(flag(kFlagCacheDir, FlagType::string, "",
                   "disk cache directory; empty: $XDG_CACHE_HOME/kjit, else ~/.cache/kjit"));
    FlagSpec max_bytes = flag(kFlagCacheMaxBytes, FlagType::integer, "1073741824",
                              "size cap of the disk cache; least recently used entries go first");
    max_bytes.min = 1048576;
    r.declare(std::move(max_bytes));
    FlagSpec jobs =
        flag(kFlagCompileJobs, FlagType::integer, "0", "parallel NVRTC compiles; 0: one per core");
    jobs.min = 0;
    jobs.max = 1024;
    r.declare(std::move(jobs));
    r.declare(flag("KJIT_COMPILE_WORKER", FlagType::string, "",
                   "compile-worker executable (kjit compile-worker); empty: compile on threads"));
    r.declare(flag(kFlagKernelDir, FlagType::string, "",
                   "read kernels from this directory instead of the embedded copies"));
    r.declare(flag(kFlagLedger, FlagType::boolean, "false",
                   "record every launch: kernel, geometry, registers (kjit ledger reads it)"));
    FlagSpec ledger_timing = flag("KJIT_LEDGER_TIMING", FlagType::boolean, "false",
                                  "also time each recorded launch with a pair of events");
    ledger_timing.requires_ = {std::string(kFlagLedger)};
    r.declare(std::move(ledger_timing));
    FlagSpec ledger_file = flag("KJIT_LEDGER_FILE", FlagType::string, "kjit-ledger.csv",
                                "where a recording process writes its ledger at exit");
    ledger_file.requires_ = {std::string(kFlagLedger)};
    r.declare(std::move(ledger_file));
    r.declare(flag(kFlagNoCache, FlagType::boolean, "false",
                   "neither read nor write the disk cache: compile every kernel afresh"));
    r.declare(flag("KJIT_BUILD_DIR", FlagType::string, "build",
                   "build directory of run.sh, test.sh and scripts/build.sh"));
    r.declare(flag("KJIT_TEST_SKIP_EXIT", FlagType::boolean, "false",
                   "tests: a GPU test without a device exits 77, read as skipped (CTest sets it)"));
    return r;
}

} // namespace kjit
