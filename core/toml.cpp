#include "core/toml.hpp"

#include "core/names.hpp"
#include "core/text_file.hpp"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>

namespace kjit {

struct TomlDocument::Impl {
    std::string file;
    std::string text;
    toml::table root;
};

namespace {

const toml::node& node_of(const void* p) {
    return *static_cast<const toml::node*>(p);
}

const toml::table& table_of(const void* p) {
    return *node_of(p).as_table();
}

const toml::array& array_of(const void* p) {
    return *node_of(p).as_array();
}

SourceLocation location(const std::string& file, const toml::source_region& region) {
    return {file, static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

std::string single_quoted(std::string_view s) {
    return "'" + std::string(s) + "'";
}

} // namespace

// ---- TomlNode ----

TomlType TomlNode::type() const {
    switch (node_of(node_).type()) {
    case toml::node_type::table:
        return TomlType::table;
    case toml::node_type::array:
        return TomlType::array;
    case toml::node_type::string:
        return TomlType::string;
    case toml::node_type::integer:
        return TomlType::integer;
    case toml::node_type::floating_point:
        return TomlType::floating;
    case toml::node_type::boolean:
        return TomlType::boolean;
    default:
        break;
    }
    return TomlType::date_time;
}

SourceLocation TomlNode::where() const {
    return location(*file_, node_of(node_).source());
}

void TomlNode::fail(const std::string& message) const {
    throw ConfigError(message, where());
}

std::optional<std::string> TomlNode::as_string() const {
    if (const auto* s = node_of(node_).as_string())
        return s->get();
    return std::nullopt;
}

std::optional<std::int64_t> TomlNode::as_integer() const {
    if (const auto* i = node_of(node_).as_integer())
        return i->get();
    return std::nullopt;
}

std::optional<bool> TomlNode::as_boolean() const {
    if (const auto* b = node_of(node_).as_boolean())
        return b->get();
    return std::nullopt;
}

std::optional<TomlTable> TomlNode::as_table() const {
    if (node_of(node_).is_table())
        return TomlTable(node_, file_);
    return std::nullopt;
}

std::optional<TomlArray> TomlNode::as_array() const {
    if (node_of(node_).is_array())
        return TomlArray(node_, file_);
    return std::nullopt;
}

std::string TomlNode::string(std::string_view what) const {
    if (auto s = as_string())
        return *s;
    fail(single_quoted(what) + " must be a string");
}

std::int64_t TomlNode::integer(std::string_view what) const {
    if (auto i = as_integer())
        return *i;
    fail(single_quoted(what) + " must be an integer");
}

bool TomlNode::boolean(std::string_view what) const {
    if (auto b = as_boolean())
        return *b;
    fail(single_quoted(what) + " must be true or false");
}

double TomlNode::number(std::string_view what) const {
    if (auto i = as_integer())
        return static_cast<double>(*i);
    if (const auto* f = node_of(node_).as_floating_point())
        return f->get();
    fail(single_quoted(what) + " must be a number");
}

TomlTable TomlNode::table(std::string_view what) const {
    if (auto t = as_table())
        return *t;
    fail(single_quoted(what) + " must be a table");
}

TomlArray TomlNode::array(std::string_view what) const {
    if (auto a = as_array())
        return *a;
    fail(single_quoted(what) + " must be an array");
}

std::vector<TomlTable> TomlNode::tables(std::string_view what) const {
    const auto* a = node_of(node_).as_array();
    if (!a || !(a->empty() || a->is_array_of_tables()))
        fail(single_quoted(what) + " must be an array of tables ([[" + std::string(what) + "]])");
    std::vector<TomlTable> out;
    for (const toml::node& item : *a)
        out.push_back(TomlTable(&item, file_));
    return out;
}

std::vector<std::string> TomlNode::strings(std::string_view what) const {
    const auto* a = node_of(node_).as_array();
    if (!a)
        fail(single_quoted(what) + " must be an array of strings");
    std::vector<std::string> out;
    for (const toml::node& item : *a) {
        const auto* s = item.as_string();
        if (!s)
            TomlNode(&item, file_).fail(single_quoted(what) + " must be an array of strings");
        out.push_back(s->get());
    }
    return out;
}

std::string TomlNode::define_value() const {
    if (auto i = as_integer())
        return std::to_string(*i);
    if (auto s = as_string())
        return *s;
    if (auto b = as_boolean())
        return *b ? "1" : "0";
    fail("a define's value must be an integer, a string or a boolean");
}

TomlExpression TomlNode::expression(std::string_view what) const {
    TomlExpression out{{}, where()};
    if (auto s = as_string()) {
        out.text = *s;
        out.where.column += 1; // past the opening quote
    } else if (auto i = as_integer()) {
        out.text = std::to_string(*i);
    } else if (const auto* f = node_of(node_).as_floating_point()) {
        std::ostringstream os;
        os.precision(17);
        os << f->get();
        out.text = os.str();
    } else {
        fail(single_quoted(what) +
             " must be an expression (a string such as \"rows * n\") or a number");
    }
    return out;
}

std::vector<TomlExpression> TomlNode::expressions(std::string_view what, std::size_t min,
                                                  std::size_t max) const {
    std::vector<TomlExpression> out;
    const auto a = as_array();
    if (!a) {
        out.push_back(expression(what));
    } else {
        if (a->size() < min || a->size() > max)
            fail(single_quoted(what) + " takes " + std::to_string(min) + " to " + std::to_string(max) +
                 " expressions");
        for (const TomlNode& item : a->items())
            out.push_back(item.expression(what));
    }
    return out;
}

// ---- TomlTable ----

std::optional<TomlNode> TomlTable::get(std::string_view key) const {
    if (const toml::node* n = table_of(table_).get(key))
        return TomlNode(n, file_);
    return std::nullopt;
}

bool TomlTable::contains(std::string_view key) const {
    return table_of(table_).contains(key);
}

TomlNode TomlTable::required(std::string_view key, std::string_view what) const {
    if (auto n = get(key))
        return *n;
    fail(std::string(what) + " needs " + single_quoted(key));
}

std::vector<TomlEntry> TomlTable::entries() const {
    std::vector<TomlEntry> out;
    for (const auto& [key, value] : table_of(table_))
        out.push_back({std::string(key.str()), location(*file_, key.source()),
                       TomlNode(&value, file_)});
    return out;
}

std::size_t TomlTable::size() const {
    return table_of(table_).size();
}

SourceLocation TomlTable::where() const {
    return location(*file_, node_of(table_).source());
}

SourceLocation TomlTable::key_where(std::string_view key) const {
    const toml::table& t = table_of(table_);
    const auto it = t.find(key);
    return it == t.end() ? where() : location(*file_, it->first.source());
}

void TomlTable::fail(const std::string& message) const {
    throw ConfigError(message, where());
}

void TomlTable::only_keys(std::initializer_list<std::string_view> known,
                          std::string_view where) const {
    only_keys(std::vector<std::string>(known.begin(), known.end()), where);
}

void TomlTable::only_keys(const std::vector<std::string>& known, std::string_view where) const {
    for (const auto& [key, value] : table_of(table_)) {
        if (std::find(known.begin(), known.end(), key.str()) != known.end())
            continue;
        std::vector<std::string> near = nearest(key.str(), known);
        for (auto& n : near)
            n = single_quoted(n);
        std::string message = "unknown key " + single_quoted(key.str());
        if (!where.empty())
            message += " in " + std::string(where);
        message += near.empty() ? " (known: " + join(known) + ")" : did_you_mean(near);
        throw ConfigError(message, location(*file_, key.source()));
    }
}

// ---- TomlArray ----

std::size_t TomlArray::size() const {
    return array_of(array_).size();
}

TomlNode TomlArray::operator[](std::size_t index) const {
    return TomlNode(array_of(array_).get(index), file_);
}

std::vector<TomlNode> TomlArray::items() const {
    std::vector<TomlNode> out;
    for (const toml::node& item : array_of(array_))
        out.push_back(TomlNode(&item, file_));
    return out;
}

// ---- TomlDocument ----

TomlDocument TomlDocument::parse(std::string_view text, std::string file) {
    auto impl = std::make_shared<Impl>();
    impl->file = std::move(file);
    impl->text = std::string(text);
    try {
        impl->root = toml::parse(impl->text, impl->file);
    } catch (const toml::parse_error& e) {
        throw ConfigError(std::string(e.description()), location(impl->file, e.source()));
    }
    return TomlDocument(std::move(impl));
}

TomlDocument TomlDocument::load(const std::filesystem::path& path, std::string_view what) {
    return parse(read_text_file(path, what), path.string());
}

TomlTable TomlDocument::root() const {
    return TomlTable(static_cast<const toml::node*>(&impl_->root), &impl_->file);
}

const std::string& TomlDocument::file() const {
    return impl_->file;
}

const std::string& TomlDocument::text() const {
    return impl_->text;
}

std::string toml_string(std::string_view s) {
    std::string out = "\"";
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

} // namespace kjit
