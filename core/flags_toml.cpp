// FlagRegistry::load_toml: an application's prefix, flags and tier rules from a TOML file.
#include "core/flag_rules.hpp"
#include "core/flags.hpp"
#include "core/names.hpp"
#include "core/toml.hpp"

namespace kjit {

namespace {

using detail::quoted_value;

/// Reads one flags file into a registry; every error carries the file, line and column.
class TomlLoader {
  public:
    explicit TomlLoader(FlagRegistry& registry) : reg_(registry) {}

    void load(const TomlDocument& doc) {
        const TomlTable root = doc.root();
        root.only_keys({"prefix", "unknown", "tier_default", "flag", "tier"}, "the flags file");
        Severity unknown = Severity::error;
        if (const auto n = root.get("unknown")) {
            const std::string u = n->string("unknown");
            if (u == "warning")
                unknown = Severity::warning;
            else if (u != "error")
                n->fail("unknown must be \"error\" or \"warning\", not " + quoted_value(u));
        }
        if (const auto n = root.get("prefix")) {
            try {
                reg_.add_prefix(n->string("prefix"), unknown);
            } catch (const ConfigError& e) {
                if (!e.file.empty())
                    throw;
                n->fail("prefix must be upper-case letters, digits and '_'");
            }
        } else if (const auto u = root.get("unknown")) {
            u->fail("unknown is set but no prefix is");
        }
        if (const auto n = root.get("tier_default"))
            reg_.set_tier_default(n->string("tier_default"));
        if (const auto n = root.get("flag"))
            for (const TomlTable& t : n->tables("flag"))
                load_flag(t);
        check_requires();
        if (const auto n = root.get("tier"))
            for (const TomlTable& t : n->tables("tier"))
                load_rule(t);
    }

  private:
    /// The position of `key` in `t` when it is there, else of `t`.
    static SourceLocation at(const TomlTable& t, const std::string& key) {
        const auto n = t.get(key);
        return n ? n->where() : t.where();
    }

    /// A default or tier value: a TOML bool, integer or string, as flag syntax.
    static std::string scalar_of(const TomlNode& n, std::string_view key) {
        if (const auto b = n.as_boolean())
            return *b ? "true" : "false";
        if (const auto i = n.as_integer())
            return std::to_string(*i);
        if (const auto s = n.as_string())
            return *s;
        n.fail(std::string(key) + " must be a boolean, an integer or a string");
    }

    static FlagType type_of(const TomlNode& n) {
        const std::string ty = n.string("type");
        if (ty == "bool")
            return FlagType::boolean;
        if (ty == "int")
            return FlagType::integer;
        if (ty == "enum")
            return FlagType::enumeration;
        if (ty == "string")
            return FlagType::string;
        n.fail("type " + quoted_value(ty) + " is not one of bool, int, enum, string");
    }

    void load_flag(const TomlTable& t) {
        t.only_keys({"name", "type", "default", "doc", "min", "max", "choices", "requires", "define"},
                    "[[flag]]");
        FlagSpec spec;
        spec.name = t.required("name", "a [[flag]]").string("name");
        const auto type = t.get("type");
        if (!type)
            t.fail("flag " + spec.name + " needs a type (bool, int, enum or string)");
        spec.type = type_of(*type);
        if (const auto n = t.get("default")) {
            const bool fits = spec.type == FlagType::boolean   ? n->as_boolean().has_value()
                              : spec.type == FlagType::integer ? n->as_integer().has_value()
                                                               : n->as_string().has_value();
            if (!fits)
                n->fail("default of " + std::string(flag_type_name(spec.type)) + " flag " +
                        spec.name + " must be " +
                        (spec.type == FlagType::boolean   ? "true or false"
                         : spec.type == FlagType::integer ? "an integer"
                                                          : "a string"));
            spec.default_value = scalar_of(*n, "default");
        }
        if (const auto n = t.get("doc"))
            spec.doc = n->string("doc");
        if (const auto n = t.get("min"))
            spec.min = n->integer("min");
        if (const auto n = t.get("max"))
            spec.max = n->integer("max");
        if (const auto n = t.get("choices"))
            spec.choices = n->strings("choices");
        if (const auto n = t.get("requires")) {
            spec.requires_ = n->strings("requires");
            const auto items = n->array("requires").items();
            for (std::size_t i = 0; i < items.size(); ++i)
                requires_.push_back({spec.name, spec.requires_[i], items[i].where()});
        }
        if (const auto n = t.get("define"))
            spec.define = n->string("define");
        try {
            detail::fill_default(spec);
            if (auto problem = detail::check_spec(spec, reg_.prefixes(), reg_.flags()))
                throw ConfigError(problem->message, at(t, problem->key));
            reg_.declare(std::move(spec));
        } catch (const ConfigError& e) {
            if (!e.file.empty())
                throw;
            t.fail(e.message);
        }
    }

    void check_requires() const {
        for (const auto& [flag, required, where] : requires_)
            if (!reg_.find(required))
                throw ConfigError("flag " + flag + " requires " + quoted_value(required) +
                                      ", which is not a declared flag" +
                                      did_you_mean(nearest(required, names())),
                                  where);
    }

    [[nodiscard]] std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& f : reg_.flags())
            out.push_back(f.name);
        return out;
    }

    void load_rule(const TomlTable& t) {
        t.only_keys({"flag", "value", "tag"}, "[[tier]]");
        TierRule rule;
        rule.flag = t.required("flag", "a [[tier]]").string("flag");
        rule.tag = t.required("tag", "a [[tier]]").string("tag");
        if (const auto n = t.get("value"))
            rule.value = scalar_of(*n, "value");
        TierRule checked = rule;
        if (auto problem = detail::check_rule(checked, reg_.flags())) {
            std::string message = problem->message;
            if (problem->key == "flag")
                message += did_you_mean(nearest(rule.flag, names()));
            throw ConfigError(message, at(t, problem->key));
        }
        reg_.add_tier_rule(std::move(rule));
    }

    FlagRegistry& reg_;
    struct Requirement {
        std::string flag, required;
        SourceLocation where;
    };
    std::vector<Requirement> requires_;
};

} // namespace

void FlagRegistry::load_toml_text(std::string_view text, const std::string& source_name) {
    FlagRegistry next = *this; // a file with a mistake leaves the registry as it was
    TomlLoader(next).load(TomlDocument::parse(text, source_name));
    *this = std::move(next);
}

void FlagRegistry::load_toml(const std::filesystem::path& file) {
    FlagRegistry next = *this;
    TomlLoader(next).load(TomlDocument::load(file, "flags file"));
    *this = std::move(next);
}

} // namespace kjit
