#include "lint/evaluate.hpp"

#include "lint/macros.hpp"
#include "lint/scanner.hpp"

#include <algorithm>
#include <climits>
#include <string_view>

namespace kjit::lint {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::optional<long long> parse_integer(std::string_view s) {
    while (!s.empty() && (s.back() == 'u' || s.back() == 'U' || s.back() == 'l' || s.back() == 'L'))
        s.remove_suffix(1);
    if (s.empty() || !is_digit(s[0]))
        return std::nullopt;
    int base = 10;
    if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    } else if (s.size() > 1 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
        base = 2;
        s.remove_prefix(2);
    } else if (s.size() > 1 && s[0] == '0') {
        base = 8;
        s.remove_prefix(1);
    }
    if (s.empty())
        return std::nullopt;
    unsigned long long v = 0;
    for (char c : s) {
        if (c == '\'')
            continue;
        int d = 0;
        if (is_digit(c))
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return std::nullopt;
        if (d >= base || v > (ULLONG_MAX - static_cast<unsigned>(d)) / static_cast<unsigned>(base))
            return std::nullopt;
        v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    }
    if (v > static_cast<unsigned long long>(LLONG_MAX))
        return std::nullopt;
    return static_cast<long long>(v);
}

// A value of an expression: `known` false when it depends on kUnknownToken.
struct Value {
    long long v = 0;
    bool known = true;
};

class Evaluator {
  public:
    Evaluator(std::vector<std::string> tokens, bool names_are_zero)
        : t_(std::move(tokens)), names_are_zero_(names_are_zero) {}

    std::optional<long long> run() {
        const auto v = comma(0);
        if (!v || p_ != t_.size() || !v->known)
            return std::nullopt;
        return v->v;
    }

  private:
    static constexpr int kMaxDepth = 200;

    bool accept(std::string_view s) {
        if (p_ < t_.size() && t_[p_] == s) {
            ++p_;
            return true;
        }
        return false;
    }

    // `a, b` is b: reached through variadic macros (`(__VA_ARGS__ + 0)` with "2, 3"), which
    // the preprocessor accepts in #if.
    std::optional<Value> comma(int depth) {
        auto v = ternary(depth + 1);
        while (v && accept(","))
            v = ternary(depth + 1);
        return v;
    }

    std::optional<Value> ternary(int depth) {
        if (depth > kMaxDepth)
            return std::nullopt;
        auto c = binary(0, depth + 1);
        if (!c || !accept("?"))
            return c;
        auto a = ternary(depth + 1);
        if (!a || !accept(":"))
            return std::nullopt;
        auto b = ternary(depth + 1);
        if (!b)
            return std::nullopt;
        if (!c->known)
            return Value{0, false};
        return c->v ? a : b;
    }

    static int precedence(std::string_view op) {
        static const std::map<std::string_view, int> kPrec = {
            {"||", 1}, {"&&", 2}, {"|", 3}, {"^", 4},  {"&", 5},  {"==", 6},
            {"!=", 6}, {"<", 7},  {">", 7}, {"<=", 7}, {">=", 7}, {"<<", 8},
            {">>", 8}, {"+", 9},  {"-", 9}, {"*", 10}, {"/", 10}, {"%", 10}};
        const auto it = kPrec.find(op);
        return it == kPrec.end() ? -1 : it->second;
    }

    static std::optional<long long> apply(std::string_view op, long long a, long long b) {
        const auto ua = static_cast<unsigned long long>(a), ub = static_cast<unsigned long long>(b);
        if (op == "+")
            return static_cast<long long>(ua + ub);
        if (op == "-")
            return static_cast<long long>(ua - ub);
        if (op == "*")
            return static_cast<long long>(ua * ub);
        if (op == "/" || op == "%") {
            if (b == 0 || (a == LLONG_MIN && b == -1))
                return std::nullopt;
            return op == "/" ? a / b : a % b;
        }
        if (op == "<<" || op == ">>") {
            if (b < 0 || b > 63)
                return std::nullopt;
            return op == "<<" ? static_cast<long long>(ua << b) : a >> b;
        }
        if (op == "<")
            return a < b;
        if (op == ">")
            return a > b;
        if (op == "<=")
            return a <= b;
        if (op == ">=")
            return a >= b;
        if (op == "==")
            return a == b;
        if (op == "!=")
            return a != b;
        if (op == "&")
            return a & b;
        if (op == "^")
            return a ^ b;
        if (op == "|")
            return a | b;
        if (op == "&&")
            return a && b;
        return a || b;
    }

    std::optional<Value> binary(int min_prec, int depth) {
        if (depth > kMaxDepth)
            return std::nullopt;
        auto lhs = unary(depth + 1);
        while (lhs && p_ < t_.size()) {
            const std::string op = t_[p_];
            const int prec = precedence(op);
            if (prec < 0 || prec < min_prec)
                break;
            ++p_;
            const auto rhs = binary(prec + 1, depth + 1);
            if (!rhs)
                return std::nullopt;
            // `0 && x` and `1 || x` do not depend on x, known or not.
            if (op == "&&" && ((lhs->known && !lhs->v) || (rhs->known && !rhs->v))) {
                lhs = Value{0, true};
                continue;
            }
            if (op == "||" && ((lhs->known && lhs->v) || (rhs->known && rhs->v))) {
                lhs = Value{1, true};
                continue;
            }
            if (!lhs->known || !rhs->known) {
                lhs = Value{0, false};
                continue;
            }
            const auto v = apply(op, lhs->v, rhs->v);
            if (!v)
                return std::nullopt;
            lhs = Value{*v, true};
        }
        return lhs;
    }

    std::optional<Value> unary(int depth) {
        if (depth > kMaxDepth || p_ >= t_.size())
            return std::nullopt;
        const std::string tok = t_[p_++];
        if (tok == "(") {
            auto v = comma(depth + 1);
            if (!v || !accept(")"))
                return std::nullopt;
            return v;
        }
        if (tok == "-" || tok == "+" || tok == "!" || tok == "~") {
            auto v = unary(depth + 1);
            if (!v || !v->known)
                return v;
            if (tok == "-")
                return Value{static_cast<long long>(0ULL - static_cast<unsigned long long>(v->v))};
            if (tok == "!")
                return Value{!v->v};
            if (tok == "~")
                return Value{~v->v};
            return v;
        }
        if (tok == kUnknownToken)
            return Value{0, false};
        if (tok == "true")
            return Value{1};
        if (tok == "false")
            return Value{0};
        if (tok.size() >= 3 && tok.front() == '\'' && tok.back() == '\'')
            return character(tok);
        if (is_identifier(tok))
            return names_are_zero_ ? std::optional<Value>(Value{0}) : std::nullopt;
        const auto v = parse_integer(tok);
        if (!v)
            return std::nullopt;
        return Value{*v};
    }

    // 'a', '\n', '\0': the values #if gives plain character literals.
    static std::optional<Value> character(std::string_view tok) {
        const std::string_view body = tok.substr(1, tok.size() - 2);
        if (body.size() == 1)
            return Value{static_cast<unsigned char>(body[0])};
        if (body.size() == 2 && body[0] == '\\') {
            static const std::map<char, long long> kEscapes = {
                {'n', 10}, {'t', 9},    {'r', 13},   {'0', 0},  {'\\', 92},
                {'\'', 39}, {'"', 34}, {'a', 7}, {'b', 8}, {'f', 12}, {'v', 11}};
            if (const auto it = kEscapes.find(body[1]); it != kEscapes.end())
                return Value{it->second};
        }
        return std::nullopt;
    }

    std::vector<std::string> t_;
    bool names_are_zero_;
    std::size_t p_ = 0;
};

} // namespace

std::optional<long long> evaluate(std::span<const std::string> tokens, const MacroTable& macros) {
    // Expands object-like macros, each at most once per path as the preprocessor does.
    std::vector<std::string> flat;
    constexpr std::size_t kMaxTokens = 4096;
    struct Frame {
        std::span<const std::string> tokens;
        std::size_t next;
        std::string name;
    };
    std::vector<Frame> stack{{tokens, 0, {}}};
    // Macros whose bodies name others twice grow exponentially; a budget keeps any input fast.
    for (std::size_t steps = 0; !stack.empty(); ++steps) {
        if (steps > 100000)
            return std::nullopt;
        Frame& top = stack.back();
        if (top.next == top.tokens.size()) {
            stack.pop_back();
            continue;
        }
        const std::string& t = top.tokens[top.next++];
        const auto it = is_identifier(t) ? macros.find(t) : macros.end();
        const bool active =
            std::any_of(stack.begin(), stack.end(), [&](const Frame& f) { return f.name == t; });
        if (it != macros.end() && !active && stack.size() < 64) {
            stack.push_back({it->second, 0, t});
            continue;
        }
        if (flat.size() >= kMaxTokens)
            return std::nullopt;
        flat.push_back(t);
    }
    return Evaluator(std::move(flat), false).run();
}

std::optional<long long> evaluate_expanded(std::vector<std::string> tokens) {
    return Evaluator(std::move(tokens), true).run();
}

} // namespace kjit::lint
