#pragma once
// The one TOML reader of kjit: every file kjit reads (flag files, shape files, digest baselines,
// sweep files) is parsed here, keeps the position of every key and value, and reports every
// mistake as a ConfigError at its file:line:col in one style. toml++ stays inside core/toml.cpp.

#include "core/diagnostic.hpp"
#include "core/error.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

class TomlTable;
class TomlArray;

/// `s` as a TOML basic string: in double quotes, `"` and `\` escaped, control characters as
/// \uXXXX. What kjit writes into the TOML files it generates (baselines, the tuned table).
std::string toml_string(std::string_view s);

/// What a TOML value holds.
enum class TomlType { table, array, string, integer, floating, boolean, date_time };

/// An expression read from TOML (a string such as "rows * n", or a number) and where its
/// first character is: for a string, the column after the opening quote.
struct TomlExpression {
    std::string text;
    SourceLocation where;
};

/// One value of a parsed document. Accessors that find another type throw a ConfigError at
/// the value's file:line:col (`'WHAT' must be an integer`). Valid while its document lives.
class TomlNode {
  public:
    [[nodiscard]] TomlType type() const;
    /// Where the value starts.
    [[nodiscard]] SourceLocation where() const;
    /// Throws ConfigError(message) at the value.
    [[noreturn]] void fail(const std::string& message) const;

    /// The value when it has that type, else nullopt (no error).
    [[nodiscard]] std::optional<std::string> as_string() const;
    [[nodiscard]] std::optional<std::int64_t> as_integer() const;
    [[nodiscard]] std::optional<bool> as_boolean() const;
    [[nodiscard]] std::optional<TomlTable> as_table() const;
    [[nodiscard]] std::optional<TomlArray> as_array() const;

    /// A string; else `'WHAT' must be a string`.
    [[nodiscard]] std::string string(std::string_view what) const;
    /// An integer; else `'WHAT' must be an integer`.
    [[nodiscard]] std::int64_t integer(std::string_view what) const;
    /// A boolean; else `'WHAT' must be true or false`.
    [[nodiscard]] bool boolean(std::string_view what) const;
    /// An integer or a floating-point number; else `'WHAT' must be a number`.
    [[nodiscard]] double number(std::string_view what) const;
    /// A table; else `'WHAT' must be a table`.
    [[nodiscard]] TomlTable table(std::string_view what) const;
    /// An array; else `'WHAT' must be an array`.
    [[nodiscard]] TomlArray array(std::string_view what) const;
    /// An array of tables; else `'WHAT' must be an array of tables ([[WHAT]])`.
    [[nodiscard]] std::vector<TomlTable> tables(std::string_view what) const;
    /// An array of strings; else `'WHAT' must be an array of strings` (at the bad element).
    [[nodiscard]] std::vector<std::string> strings(std::string_view what) const;
    /// A define's value as -D text: an integer, a string, or a boolean (1 / 0); else
    /// `a define's value must be an integer, a string or a boolean`.
    [[nodiscard]] std::string define_value() const;
    /// A string or a number read as an expression; else `'WHAT' must be an expression (a
    /// string such as "rows * n") or a number`.
    [[nodiscard]] TomlExpression expression(std::string_view what) const;
    /// One expression, or an array of `min`..`max` of them; else `'WHAT' takes MIN to MAX
    /// expressions`.
    [[nodiscard]] std::vector<TomlExpression> expressions(std::string_view what, std::size_t min,
                                                          std::size_t max) const;

  private:
    friend class TomlTable;
    friend class TomlArray;
    friend class TomlDocument;
    TomlNode(const void* node, const std::string* file) : node_(node), file_(file) {}
    const void* node_;        // a toml::node of the document
    const std::string* file_; // the document's file name
};

/// One key of a table, where the key is written, and its value.
struct TomlEntry {
    std::string key;
    SourceLocation key_where;
    TomlNode value;
};

/// A table of a parsed document.
class TomlTable {
  public:
    /// The value of `key`, or nullopt.
    [[nodiscard]] std::optional<TomlNode> get(std::string_view key) const;
    [[nodiscard]] bool contains(std::string_view key) const;
    /// The value of `key`; else `WHAT needs 'KEY'` at the table.
    [[nodiscard]] TomlNode required(std::string_view key, std::string_view what) const;
    /// Every key with its value, in key order.
    [[nodiscard]] std::vector<TomlEntry> entries() const;
    [[nodiscard]] std::size_t size() const;
    /// Where the table starts (its header, or its '{').
    [[nodiscard]] SourceLocation where() const;
    /// Where `key` is written (the table's position when it is absent).
    [[nodiscard]] SourceLocation key_where(std::string_view key) const;
    /// Throws ConfigError(message) at the table.
    [[noreturn]] void fail(const std::string& message) const;
    /// Every key must be one of `known`; else, at the first other key, `unknown key 'x' in
    /// WHERE; did you mean 'y'?` or, with nothing close, `unknown key 'x' in WHERE (known: a, b)`
    /// (without ` in WHERE` when `where` is empty).
    void only_keys(std::initializer_list<std::string_view> known, std::string_view where) const;
    /// only_keys() over a list built at run time.
    void only_keys(const std::vector<std::string>& known, std::string_view where) const;
    /// The table as a node (for TomlNode's accessors and position).
    [[nodiscard]] TomlNode node() const { return {table_, file_}; }

  private:
    friend class TomlNode;
    friend class TomlDocument;
    TomlTable(const void* table, const std::string* file) : table_(table), file_(file) {}
    const void* table_;
    const std::string* file_;
};

/// An array of a parsed document.
class TomlArray {
  public:
    [[nodiscard]] std::size_t size() const;
    [[nodiscard]] bool empty() const { return size() == 0; }
    /// Element `index` (< size()).
    [[nodiscard]] TomlNode operator[](std::size_t index) const;
    /// Every element, in order.
    [[nodiscard]] std::vector<TomlNode> items() const;
    /// The array as a node (for TomlNode's accessors and position).
    [[nodiscard]] TomlNode node() const { return {array_, file_}; }

  private:
    friend class TomlNode;
    TomlArray(const void* array, const std::string* file) : array_(array), file_(file) {}
    const void* array_;
    const std::string* file_;
};

/// A parsed TOML file or text; owns the values its nodes point into.
class TomlDocument {
  public:
    /// Parses `text`; a syntax error is a ConfigError at `file`:line:col.
    static TomlDocument parse(std::string_view text, std::string file);
    /// Reads (read_text_file: a regular file only) and parses `path`; `cannot read WHAT:
    /// <reason>` when it cannot be read.
    static TomlDocument load(const std::filesystem::path& path, std::string_view what);

    [[nodiscard]] TomlTable root() const;
    /// The file name every error names.
    [[nodiscard]] const std::string& file() const;
    /// The text that was parsed.
    [[nodiscard]] const std::string& text() const;

  private:
    struct Impl;
    explicit TomlDocument(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<const Impl> impl_;
};

} // namespace kjit
