#pragma once
// Typed reads of toml++ nodes for the files kjit reads with contracts in them (sweep files and
// their inline contracts): every mistake is a ConfigError at the node's file:line:col.

#include "core/error.hpp"
#include "kernels/expr.hpp"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>

namespace kjit {

/// Reads values out of one file's TOML tree, failing at the position of what it read.
struct TomlReader {
    std::string file;

    [[noreturn]] void fail(const toml::node& node, const std::string& message) const {
        throw ConfigError(message, file, static_cast<int>(node.source().begin.line),
                          static_cast<int>(node.source().begin.column));
    }
    [[noreturn]] void fail(const toml::key& key, const std::string& message) const {
        throw ConfigError(message, file, static_cast<int>(key.source().begin.line),
                          static_cast<int>(key.source().begin.column));
    }
    /// ConfigError at the first key of `t` not in `known`.
    void only_keys(const toml::table& t, std::initializer_list<std::string_view> known,
                   const std::string& where) const {
        for (const auto& [k, v] : t) {
            bool ok = false;
            std::string list;
            for (auto n : known) {
                ok = ok || k.str() == n;
                list += (list.empty() ? "" : ", ") + std::string(n);
            }
            if (!ok)
                fail(k, "unknown key '" + std::string(k.str()) + "' in " + where +
                            " (known: " + list + ")");
        }
    }
    const toml::table& table(const toml::node& n, const std::string& what) const {
        if (const auto* t = n.as_table())
            return *t;
        fail(n, "'" + what + "' must be a table");
    }
    long long integer(const toml::node& n, const std::string& what) const {
        if (const auto* i = n.as_integer())
            return i->get();
        fail(n, "'" + what + "' must be an integer");
    }
    std::string string(const toml::node& n, const std::string& what) const {
        if (const auto* s = n.as_string())
            return s->get();
        fail(n, "'" + what + "' must be a string");
    }
    /// The text of an expression given as a string ("rows * n") or a number.
    std::string expr_text(const toml::node& n, const std::string& what) const {
        if (const auto* s = n.as_string())
            return s->get();
        if (const auto* i = n.as_integer())
            return std::to_string(i->get());
        if (const auto* f = n.as_floating_point()) {
            std::ostringstream os;
            os.precision(17);
            os << f->get();
            return os.str();
        }
        fail(n, "'" + what + "' must be an expression (a string such as \"rows * n\") or a number");
    }
    /// An expression parsed against `scope`; a mistake is reported at its column inside the
    /// string (after the opening quote).
    Expr expr(const toml::node& n, const Scope& scope, const std::string& what) const {
        const std::string text = expr_text(n, what);
        const int column =
            static_cast<int>(n.source().begin.column) + (n.as_string() != nullptr ? 1 : 0);
        return Expr(text, scope, file, static_cast<int>(n.source().begin.line), column);
    }
};

} // namespace kjit
