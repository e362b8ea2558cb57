#pragma once

#include "core/diagnostic.hpp"

#include <map>
#include <memory>
#include <string>

namespace kjit {

struct TomlExpression;

/// Named values an expression may use: shape entries, defines and launch parameters.
using Scope = std::map<std::string, double>;

/// An arithmetic expression over named values, through muparser: + - * / % ^, comparisons,
/// && ||, ?:, min(...), max(...), ceil_div(a, b), floor, ceil, abs, sqrt, and f32(x), x
/// rounded to the nearest float (a value written the way fp32 code computes it).
class Expr {
  public:
    /// Parses `text` against the names in `scope` (their values may change before each eval).
    /// Throws ConfigError(message, file, line, column + position) for a syntax error or an
    /// unknown name; `column` is where the text starts in its file.
    Expr(const std::string& text, const Scope& scope, const std::string& file = {}, int line = 0,
         int column = 0);
    /// Parses an expression read from a TOML file; a mistake is reported at its file:line and
    /// the column of the mistake inside the string.
    Expr(const TomlExpression& expression, const Scope& scope);
    Expr(Expr&&) noexcept;
    Expr& operator=(Expr&&) noexcept;
    ~Expr();

    /// The value with `scope`'s current values; ConfigError naming the expression, its
    /// position and the values it read when that is not a finite number, or when a step of it
    /// divided by zero or was invalid (sqrt(-1), x % 0), even if a comparison hid it.
    [[nodiscard]] double eval(const Scope& scope) const;
    /// eval() that must be a whole number within 64 bits; ConfigError naming the expression
    /// otherwise.
    [[nodiscard]] long long eval_int(const Scope& scope) const;
    [[nodiscard]] const std::string& text() const { return text_; }
    /// Where the expression is written (no path: declared in code).
    [[nodiscard]] SourceLocation where() const;

  private:
    [[nodiscard]] std::string values_text(const Scope& scope) const;
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::string text_, file_;
    int line_ = 0, column_ = 0;
};

} // namespace kjit
