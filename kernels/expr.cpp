#include "kernels/expr.hpp"

#include "core/error.hpp"
#include "core/toml.hpp"

#include <muParser.h>

#include <cmath>
#include <vector>

namespace kjit {

namespace {
double ceil_div(double a, double b) { return std::ceil(a / b); }
double modulo(double a, double b) { return std::fmod(a, b); }
double round_f32(double a) { return static_cast<double>(static_cast<float>(a)); }
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
        p.DefineOprt("%", modulo, mu::prMUL_DIV, mu::oaLEFT, true);
        for (const auto& [name, value] : scope) {
            impl_->slots[name] = value;
            p.DefineVar(name, &impl_->slots[name]);
        }
        p.SetExpr(text);
        p.Eval(); // parses now: a bad expression is reported when the file is read
    } catch (const mu::Parser::exception_type& e) {
        throw ConfigError("bad expression '" + text + "': " + e.GetMsg(), file_, line_,
                          column_ > 0 ? column_ + std::max(0, e.GetPos()) : 0);
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
    try {
        return impl_->parser.Eval();
    } catch (const mu::Parser::exception_type& e) {
        throw ConfigError("cannot evaluate '" + text_ + "': " + e.GetMsg(), file_, line_, column_);
    }
}

long long Expr::eval_int(const Scope& scope) const {
    const double v = eval(scope);
    if (!std::isfinite(v) || v != std::floor(v))
        throw ConfigError("'" + text_ + "' = " + std::to_string(v) + " is not a whole number",
                          file_, line_, column_);
    return static_cast<long long>(v);
}

} // namespace kjit
