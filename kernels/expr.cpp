#include "kernels/expr.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "core/toml.hpp"

#include <muParser.h>

#include <cctype>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <vector>

namespace kjit {

namespace {
double ceil_div(double a, double b) { return std::ceil(a / b); }
double modulo(double a, double b) { return std::fmod(a, b); }
double floor_of(double a) {
    return std::floor(a);
}
double ceil_of(double a) {
    return std::ceil(a);
}
double round_f32(double a) { return static_cast<double>(static_cast<float>(a)); }
std::string format_number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
// What the expressions call besides muparser's own (min, max, floor, ceil, abs, sqrt, ...).
const std::vector<std::string> kFunctions = {"ceil_div", "f32",  "min", "max",
                                             "floor",    "ceil", "abs", "sqrt"};

/// muparser's message, or for a name it does not know ("Unexpected token"), which name, what
/// it is near and what the expression may name: a misspelt define reads as a syntax error.
std::string parse_problem(const mu::Parser::exception_type& e, const std::string& text,
                          const Scope& scope) {
    const std::string token = e.GetToken();
    const bool identifier = e.GetCode() == mu::ecUNASSIGNABLE_TOKEN && !token.empty() &&
                            (std::isalpha(static_cast<unsigned char>(token[0])) || token[0] == '_');
    if (!identifier)
        return e.GetMsg();
    const std::size_t after = text.find_first_not_of(" \t", e.GetPos() + token.size());
    if (after != std::string::npos && text[after] == '(')
        return "unknown function '" + token + "'" + did_you_mean(nearest(token, kFunctions)) +
               " (functions: " + join(kFunctions) + ")";
    std::vector<std::string> names;
    for (const auto& [name, _] : scope)
        names.push_back(name);
    const std::vector<std::string> near = nearest(token, names);
    return "unknown name '" + token + "'" +
           (near.empty() ? " (it may name: " + (names.empty() ? "nothing" : join(names)) + ")"
                         : did_you_mean(near));
}
} // namespace

struct Expr::Impl {
    mu::Parser parser;
    std::map<std::string, double> slots; // muparser reads variables through these addresses
};

Expr::Expr(const std::string& text, const Scope& scope, const std::string& file, int line,
           int column)
    : impl_(std::make_unique<Impl>()), text_(text), file_(file), line_(line), column_(column) {
    try {
        mu::Parser& p = impl_->parser;
        p.DefineFun("ceil_div", ceil_div);
        p.DefineFun("f32", round_f32);
        p.DefineFun("floor", floor_of); // muparser has neither
        p.DefineFun("ceil", ceil_of);
        p.DefineOprt("%", modulo, mu::prMUL_DIV, mu::oaLEFT, true);
        for (const auto& [name, value] : scope) {
            impl_->slots[name] = value;
            p.DefineVar(name, &impl_->slots[name]);
        }
        p.SetExpr(text);
        p.Eval(); // parses now: a bad expression is reported when the file is read
    } catch (const mu::Parser::exception_type& e) {
        throw ConfigError("bad expression '" + text + "': " + parse_problem(e, text, scope), file_,
                          line_, column_ > 0 ? column_ + std::max(0, e.GetPos()) : 0);
    }
}

Expr::Expr(const TomlExpression& expression, const Scope& scope)
    : Expr(expression.text, scope, expression.where.path, expression.where.line,
           expression.where.column) {}

Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;
Expr::~Expr() = default;

double Expr::eval(const Scope& scope) const {
    for (auto& [name, slot] : impl_->slots)
        if (const auto it = scope.find(name); it != scope.end())
            slot = it->second;
    double v = 0;
    // A division by zero or sqrt(-1) must not pass for a value: NaN compares unequal to 0, so
    // a constraint would hold, an infinite dimension would wrap, and `x / 0 > 1` is a plain 1.
    // The floating-point exception flags see the operation even when a comparison hides it.
    std::feclearexcept(FE_DIVBYZERO | FE_INVALID);
    try {
        v = impl_->parser.Eval();
    } catch (const mu::Parser::exception_type& e) {
        throw ConfigError("cannot evaluate '" + text_ + "': " + e.GetMsg(), file_, line_, column_);
    }
    if (!std::isfinite(v))
        throw ConfigError("'" + text_ + "' = " + std::to_string(v) + " is not a finite number" +
                              values_text(scope),
                          file_, line_, column_);
    if (std::fetestexcept(FE_DIVBYZERO | FE_INVALID))
        throw ConfigError("'" + text_ + "' divides by zero or takes an invalid operation" +
                              values_text(scope) + ": its value " + format_number(v) +
                              " means nothing",
                          file_, line_, column_);
    return v;
}

long long Expr::eval_int(const Scope& scope) const {
    const double v = eval(scope);
    if (v != std::floor(v))
        // `/` divides exactly, not as C's integer division does: say how to round.
        throw ConfigError("'" + text_ + "' = " + std::to_string(v) + " is not a whole number" +
                              (text_.find('/') != std::string::npos
                                   ? " (`/` divides exactly: ceil_div(a, b) rounds up, "
                                     "floor(a / b) down)"
                                   : ""),
                          file_, line_, column_);
    // 2^63 is the first double past the largest long long.
    if (v >= 9223372036854775808.0 || v < -9223372036854775808.0)
        throw ConfigError("'" + text_ + "' = " + std::to_string(v) +
                              " is out of range for a 64-bit integer",
                          file_, line_, column_);
    return static_cast<long long>(v);
}

SourceLocation Expr::where() const {
    return {file_, line_, column_};
}

std::string Expr::values_text(const Scope& scope) const {
    std::string out;
    try {
        for (const auto& [name, slot] : impl_->parser.GetUsedVar()) {
            if (!scope.contains(name))
                continue;
            out += (out.empty() ? " (" : ", ") + name + "=" + format_number(*slot);
        }
    } catch (const mu::Parser::exception_type&) {
        return {}; // only the failure path's context: none rather than a second error
    }
    return out.empty() ? out : out + ")";
}

} // namespace kjit
