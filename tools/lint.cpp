#include "tools/lint.hpp"

#include "core/names.hpp"

#include "core/error.hpp"
#include "jit/shape_file.hpp"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <exception>
#include <set>
#include <thread>
#include <tuple>

namespace kjit::lint {

namespace {

const std::vector<Rule> kRules = {
    {"KJ001", Severity::error, false,
     "broken macro continuation: a #define body cut by a missing '\\', a '\\' followed by "
     "whitespace, or a '\\' on the last line"},
    {"KJ002", Severity::error, true,
     "injected define never read: a define a shape file injects for a kernel that its "
     "preprocessed source never tests or expands"},
    {"KJ003", Severity::error, true,
     "condition on an undefined macro: #if/#elif on a name neither defined in the source nor "
     "injected (it silently evaluates to 0)"},
    {"KJ004", Severity::warning, true,
     "knob default disagrees with production: an #ifndef default that matches none of the "
     "values the shape files inject"},
    {"KJ005", Severity::error, false,
     "NVRTC-hostile source: an #include NVRTC cannot find (host headers), unbalanced "
     "#if/#else/#endif"},
};

bool is_ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
bool is_ident_char(char c) {
    return is_ident_start(c) || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_identifier(std::string_view s) {
    return !s.empty() && is_ident_start(s[0]);
}

// Names the implementation owns (`__CUDA_ARCH__`, `_MSC_VER`): never the kernel author's knobs.
bool is_reserved(std::string_view s) {
    return s.size() >= 2 && s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'));
}

// ---- the scanner ----------------------------------------------------------------------------

struct LChar {
    char c;
    int line;
    int column;
    std::size_t offset;
};

// The characters after translation phase 2: backslash-newline pairs are gone, every
// character keeps the physical position it came from.
std::vector<LChar> logical(std::string_view t) {
    std::vector<LChar> out;
    out.reserve(t.size());
    int line = 1, column = 1;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '\\') {
            std::size_t j = i + 1;
            if (j + 1 < t.size() && t[j] == '\r' && t[j + 1] == '\n')
                ++j;
            if (j < t.size() && t[j] == '\n') {
                i = j;
                ++line;
                column = 1;
                continue;
            }
        }
        out.push_back({t[i], line, column, i});
        if (t[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return out;
}

class Lexer {
  public:
    explicit Lexer(std::string_view text) : text_(text), l_(logical(text)) {}

    ScannedSource run() {
        ScannedSource out;
        bool line_start = true;
        bool in_directive = false, want_name = false;
        while (p_ < l_.size()) {
            const char c = l_[p_].c;
            if (c == '\n') {
                if (in_directive)
                    out.directives.back().end_line = l_[p_].line;
                in_directive = false;
                line_start = true;
                ++p_;
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                ++p_;
                continue;
            }
            if (c == '/' && at(1) == '/') {
                const std::size_t begin = l_[p_].offset;
                while (p_ < l_.size() && l_[p_].c != '\n')
                    ++p_;
                out.comments.emplace_back(begin, end_offset());
                continue;
            }
            if (c == '/' && at(1) == '*') {
                const std::size_t begin = l_[p_].offset;
                p_ += 2;
                while (p_ < l_.size() && !(l_[p_].c == '*' && at(1) == '/'))
                    ++p_;
                p_ = std::min(p_ + 2, l_.size());
                out.comments.emplace_back(begin, p_ < l_.size() ? l_[p_].offset : text_.size());
                continue;
            }
            if (c == '#' && line_start) {
                Directive d;
                d.line = l_[p_].line;
                d.column = l_[p_].column;
                d.end_line = d.line;
                out.directives.push_back(std::move(d));
                in_directive = want_name = true;
                line_start = false;
                ++p_;
                continue;
            }
            line_start = false;
            const bool header_name = in_directive && !want_name && c == '<' &&
                                     out.directives.back().args.empty() &&
                                     (out.directives.back().name == "include" ||
                                      out.directives.back().name == "include_next");
            PpToken tok = next_token(header_name);
            if (!in_directive)
                continue;
            Directive& d = out.directives.back();
            if (want_name) {
                want_name = false;
                if (is_identifier(tok.text)) {
                    d.name = std::move(tok.text);
                    continue;
                }
            }
            d.args.push_back(std::move(tok));
        }
        if (in_directive)
            out.directives.back().end_line = l_.empty() ? 1 : l_.back().line;
        return out;
    }

    // The tokens of text, directives and all.
    std::vector<std::string> tokens() {
        std::vector<std::string> out;
        while (p_ < l_.size()) {
            const char c = l_[p_].c;
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
                ++p_;
                continue;
            }
            if (c == '/' && (at(1) == '/' || at(1) == '*')) {
                const bool block = at(1) == '*';
                p_ += 2;
                while (p_ < l_.size() &&
                       (block ? !(l_[p_].c == '*' && at(1) == '/') : l_[p_].c != '\n'))
                    ++p_;
                if (block)
                    p_ = std::min(p_ + 2, l_.size());
                continue;
            }
            out.push_back(next_token(false).text);
        }
        return out;
    }

  private:
    char at(std::size_t k) const { return p_ + k < l_.size() ? l_[p_ + k].c : '\0'; }
    std::size_t end_offset() const { return p_ < l_.size() ? l_[p_].offset : text_.size(); }

    PpToken next_token(bool header_name) {
        PpToken tok{{}, l_[p_].line, l_[p_].column};
        const char c = l_[p_].c;
        auto take = [&] { tok.text += l_[p_++].c; };
        if (header_name) {
            while (p_ < l_.size() && l_[p_].c != '\n' && l_[p_].c != '>')
                take();
            if (p_ < l_.size() && l_[p_].c == '>')
                take();
        } else if (is_ident_start(c)) {
            while (p_ < l_.size() && is_ident_char(l_[p_].c))
                take();
        } else if (is_digit(c) || (c == '.' && is_digit(at(1)))) {
            while (p_ < l_.size()) {
                const char d = l_[p_].c;
                if ((d == '+' || d == '-') && !tok.text.empty() &&
                    (tok.text.back() == 'e' || tok.text.back() == 'E' || tok.text.back() == 'p' ||
                     tok.text.back() == 'P'))
                    take();
                else if (is_ident_char(d) || d == '.' || d == '\'')
                    take();
                else
                    break;
            }
        } else if (c == '"' || c == '\'') {
            take();
            while (p_ < l_.size() && l_[p_].c != '\n') {
                if (l_[p_].c == '\\' && p_ + 1 < l_.size() && l_[p_ + 1].c != '\n') {
                    take();
                    take();
                    continue;
                }
                const bool closing = l_[p_].c == c;
                take();
                if (closing)
                    break;
            }
        } else {
            static constexpr std::string_view kPairs[] = {
                "##", "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "->", "::", "++", "--"};
            take();
            if (p_ < l_.size())
                for (auto pair : kPairs)
                    if (pair[0] == c && pair[1] == l_[p_].c) {
                        take();
                        break;
                    }
        }
        return tok;
    }

    std::string_view text_;
    std::vector<LChar> l_;
    std::size_t p_ = 0;
};

// ---- the expression evaluator ---------------------------------------------------------------

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

class Evaluator {
  public:
    explicit Evaluator(std::vector<std::string> tokens) : t_(std::move(tokens)) {}

    std::optional<long long> run() {
        const auto v = ternary(0);
        if (!v || p_ != t_.size())
            return std::nullopt;
        return v;
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

    std::optional<long long> ternary(int depth) {
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
        return *c ? a : b;
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

    std::optional<long long> binary(int min_prec, int depth) {
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
            lhs = apply(op, *lhs, *rhs);
        }
        return lhs;
    }

    std::optional<long long> unary(int depth) {
        if (depth > kMaxDepth || p_ >= t_.size())
            return std::nullopt;
        const std::string tok = t_[p_++];
        if (tok == "(") {
            auto v = ternary(depth + 1);
            if (!v || !accept(")"))
                return std::nullopt;
            return v;
        }
        if (tok == "-" || tok == "+" || tok == "!" || tok == "~") {
            auto v = unary(depth + 1);
            if (!v)
                return std::nullopt;
            if (tok == "-")
                return static_cast<long long>(0ULL - static_cast<unsigned long long>(*v));
            if (tok == "!")
                return !*v;
            if (tok == "~")
                return ~*v;
            return v;
        }
        if (tok == "true")
            return 1;
        if (tok == "false")
            return 0;
        return parse_integer(tok);
    }

    std::vector<std::string> t_;
    std::size_t p_ = 0;
};

// ---- text rules -----------------------------------------------------------------------------

struct Line {
    std::size_t begin;
    std::string_view text; // without the newline and a trailing '\r'
};

std::vector<Line> physical_lines(std::string_view text) {
    std::vector<Line> out;
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t end = text.find('\n', begin);
        const bool last = end == std::string_view::npos;
        if (last)
            end = text.size();
        std::string_view t = text.substr(begin, end - begin);
        if (!t.empty() && t.back() == '\r')
            t.remove_suffix(1);
        out.push_back({begin, t});
        begin = end + 1;
    }
    return out;
}

bool in_comment(const ScannedSource& s, std::size_t offset) {
    auto it = std::upper_bound(s.comments.begin(), s.comments.end(), offset,
                               [](std::size_t o, const auto& range) { return o < range.first; });
    return it != s.comments.begin() && offset < std::prev(it)->second;
}

bool is_conditional_start(std::string_view name) {
    return name == "if" || name == "ifdef" || name == "ifndef";
}
bool is_conditional_else(std::string_view name) {
    return name == "elif" || name == "elifdef" || name == "elifndef" || name == "else";
}

void lint_continuations(const SourceFile& file, const ScannedSource& scanned,
                        std::vector<Finding>& out) {
    const auto lines = physical_lines(file.text);
    auto add = [&](int line, int column, std::string message) {
        out.push_back({file.path, line, column, Severity::error, "KJ001", std::move(message)});
    };
    std::set<int> directive_lines;
    for (const auto& d : scanned.directives)
        directive_lines.insert(d.line);
    for (const auto& d : scanned.directives) {
        if (d.name != "define" || d.end_line >= static_cast<int>(lines.size()))
            continue;
        const Line& next = lines[static_cast<std::size_t>(d.end_line)];
        if (next.text.empty() || next.text.back() != '\\' ||
            directive_lines.contains(d.end_line + 1) ||
            in_comment(scanned, next.begin + next.text.size() - 1))
            continue;
        const std::size_t first = next.text.find_first_not_of(" \t");
        const std::string name = d.args.empty() ? std::string("the macro") : d.args[0].text;
        add(d.end_line + 1, static_cast<int>(first) + 1,
            "this line ends with '\\' but the #define of " + name + " (line " +
                std::to_string(d.line) + ") ended on line " + std::to_string(d.end_line) +
                ": missing '\\' there; the rest of the body is top-level code");
    }
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string_view t = lines[i].text;
        const std::size_t last = t.find_last_not_of(" \t\f\v");
        if (last == std::string_view::npos || t[last] != '\\' ||
            in_comment(scanned, lines[i].begin + last))
            continue;
        const int line = static_cast<int>(i) + 1, column = static_cast<int>(last) + 1;
        if (last + 1 < t.size())
            add(line, column,
                "'\\' followed by whitespace is not a line continuation for NVRTC: the line "
                "ends here");
        else if (i + 1 == lines.size())
            add(line, column, "line continuation on the last line of the file");
    }
}

void lint_directives(const SourceFile& file, const ScannedSource& scanned, const SourceSet& sources,
                     std::vector<Finding>& out) {
    auto add = [&](int line, int column, std::string message) {
        out.push_back({file.path, line, column, Severity::error, "KJ005", std::move(message)});
    };
    struct Open {
        const Directive* d;
        bool seen_else;
        bool compiler_guard; // tests an implementation name: a branch for another compiler
    };
    std::vector<Open> stack;
    const std::string dir = std::filesystem::path(file.name).parent_path().generic_string();
    for (const auto& d : scanned.directives) {
        if (is_conditional_start(d.name)) {
            bool guard = false;
            for (const auto& a : d.args)
                guard = guard || is_reserved(a.text);
            stack.push_back({&d, false, guard});
        } else if (is_conditional_else(d.name)) {
            if (stack.empty())
                add(d.line, d.column, "#" + d.name + " without #if");
            else if (stack.back().seen_else)
                add(d.line, d.column, "#" + d.name + " after #else");
            else if (d.name == "else")
                stack.back().seen_else = true;
        } else if (d.name == "endif") {
            if (stack.empty())
                add(d.line, d.column, "#endif without #if");
            else
                stack.pop_back();
        } else if (d.name == "include" && !d.args.empty()) {
            if (std::any_of(stack.begin(), stack.end(),
                            [](const Open& o) { return o.compiler_guard; }))
                continue;
            const PpToken& h = d.args[0];
            if (h.text.size() >= 2 && h.text.front() == '<') {
                add(h.line, h.column,
                    "#include " + h.text +
                        ": NVRTC compiles with no include path, host headers are not found "
                        "(a kernel includes only kernel sources)");
            } else if (h.text.size() >= 2 && h.text.front() == '"' && h.text.back() == '"') {
                const std::string name = h.text.substr(1, h.text.size() - 2);
                const std::string local =
                    dir.empty()
                        ? name
                        : (std::filesystem::path(dir) / name).lexically_normal().generic_string();
                if (!sources.find(name) && !sources.find(local))
                    add(h.line, h.column,
                        "#include " + h.text +
                            " names no file among the kernel sources: NVRTC cannot find it");
            }
        }
    }
    for (const auto& o : stack)
        add(o.d->line, o.d->column,
            "unterminated #" + o.d->name + ": no #endif before the end of the file");
}

// ---- clang rules ----------------------------------------------------------------------------

// The names a condition reads as values: not those under `defined`, nor `__has_include(...)`,
// nor one the condition also tests with `defined` (`defined(X) && X > 2` reads X only if set).
std::vector<const PpToken*> condition_names(const Directive& d) {
    std::vector<const PpToken*> out;
    const auto& a = d.args;
    std::set<std::string_view> tested;
    for (std::size_t i = 0; i + 1 < a.size(); ++i)
        if (a[i].text == "defined")
            tested.insert(a[i + 1].text == "(" && i + 2 < a.size() ? a[i + 2].text : a[i + 1].text);
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (tested.contains(a[i].text))
            continue;
        if (!is_identifier(a[i].text))
            continue;
        if (a[i].text == "defined") {
            if (i + 1 < a.size() && a[i + 1].text == "(")
                i += 2;
            else
                i += 1;
            continue;
        }
        if (is_reserved(a[i].text)) {
            // __has_include(<x>) and friends take arguments that are no macro names
            if (i + 1 < a.size() && a[i + 1].text == "(") {
                int depth = 0;
                for (++i; i < a.size(); ++i) {
                    depth += a[i].text == "(" ? 1 : a[i].text == ")" ? -1 : 0;
                    if (depth == 0)
                        break;
                }
            }
            continue;
        }
        if (a[i].text == "true" || a[i].text == "false")
            continue;
        out.push_back(&a[i]);
    }
    return out;
}

// Every name a conditional directive mentions, `defined` operands included.
void tested_names(const ScannedSource& s, std::set<std::string>& out) {
    for (const auto& d : s.directives)
        if (is_conditional_start(d.name) || is_conditional_else(d.name))
            for (const auto& a : d.args)
                if (is_identifier(a.text) && a.text != "defined" && !is_reserved(a.text))
                    out.insert(a.text);
}

// The macros a parse read: those it expanded or tested, and every name in the body of one it
// expanded (libclang records no expansion nested in another).
std::set<std::string> read_macros(const ParsedUnit& unit) {
    std::map<std::string, std::vector<const MacroDef*>> defs;
    for (const auto& m : unit.macros)
        defs[m.name].push_back(&m);
    std::set<std::string> read;
    std::vector<std::string> work;
    for (const auto& u : unit.uses)
        if (read.insert(u.name).second)
            work.push_back(u.name);
    while (!work.empty()) {
        const std::string name = std::move(work.back());
        work.pop_back();
        const auto it = defs.find(name);
        if (it == defs.end())
            continue;
        for (const MacroDef* m : it->second)
            for (const auto& t : m->body)
                if (is_identifier(t) && read.insert(t).second)
                    work.push_back(t);
    }
    return read;
}

// The knob `name` is given a default: `#ifndef name` (or `#if !defined name`) is the directive
// right before its `#define`.
bool guarded_default(const ScannedSource& s, const std::string& name, int define_line) {
    for (std::size_t i = 1; i < s.directives.size(); ++i) {
        const Directive& d = s.directives[i];
        if (d.line != define_line || d.name != "define")
            continue;
        const Directive& g = s.directives[i - 1];
        if (g.name == "ifndef")
            return !g.args.empty() && g.args[0].text == name;
        if (g.name == "if") {
            std::string cond;
            for (const auto& a : g.args)
                cond += a.text;
            return cond == "!defined" + name || cond == "!defined(" + name + ")";
        }
        return false;
    }
    return false;
}

std::string join(const std::vector<std::string>& tokens) {
    std::string out;
    for (const auto& t : tokens)
        out += (out.empty() ? "" : " ") + t;
    return out;
}

bool same_value(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    const auto va = evaluate(a, {}), vb = evaluate(b, {});
    if (va && vb)
        return *va == *vb;
    return a == b;
}

struct ParseJob {
    const SourceFile* file;
    std::map<std::string, std::string> defines;
    std::optional<ParsedUnit> unit;
    std::string error;
};

void run_parallel(const Libclang& clang, const SourceSet& sources, std::vector<ParseJob>& jobs) {
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next++) < jobs.size();) {
            try {
                jobs[i].unit = clang.parse(sources, *jobs[i].file, jobs[i].defines);
            } catch (const std::exception& e) {
                jobs[i].error = e.what();
            }
        }
    };
    const std::size_t n =
        std::min<std::size_t>(jobs.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < n; ++i)
        threads.emplace_back(worker);
    worker();
    for (auto& t : threads)
        t.join();
}

class ClangRules {
  public:
    ClangRules(const LintRequest& r, std::vector<Finding>& out, std::vector<std::string>& notes)
        : r_(r), sources_(*r.sources), out_(out), notes_(notes) {}

    void run(const std::vector<const SourceFile*>& files) {
        // One parse with the source's own defaults, one per distinct injected define set.
        std::vector<ParseJob> jobs;
        std::map<const SourceFile*, std::vector<std::size_t>> by_file;
        std::vector<const SourceFile*> kernels, headers;
        for (const SourceFile* f : files)
            (f->is_kernel() ? kernels : headers).push_back(f);
        for (const SourceFile* f : kernels) {
            by_file[f].push_back(jobs.size());
            jobs.push_back({f, {}, {}, {}});
            for (const Injection* inj : injections(*f)) {
                const bool seen =
                    std::any_of(by_file[f].begin(), by_file[f].end(),
                                [&](std::size_t j) { return jobs[j].defines == inj->defines; });
                if (!seen) {
                    by_file[f].push_back(jobs.size());
                    jobs.push_back({f, inj->defines, {}, {}});
                }
            }
        }
        run_parallel(*r_.clang, sources_, jobs);
        std::set<std::string> covered;
        for (const SourceFile* f : kernels) {
            std::vector<const ParseJob*> units;
            for (std::size_t j : by_file[f]) {
                if (jobs[j].unit)
                    units.push_back(&jobs[j]);
                else
                    notes_.push_back(f->path + ": clang rules not checked: " + jobs[j].error);
            }
            if (units.empty())
                continue;
            kernel(*f, units);
            for (const auto* u : units)
                covered.insert(u->unit->files.begin(), u->unit->files.end());
        }
        // A header no linted kernel includes is parsed on its own, for its conditions.
        std::vector<ParseJob> alone;
        for (const SourceFile* h : headers)
            if (!covered.contains(h->name))
                alone.push_back({h, {}, {}, {}});
        run_parallel(*r_.clang, sources_, alone);
        for (const auto& job : alone) {
            if (!job.unit) {
                notes_.push_back(job.file->path + ": clang rules not checked: " + job.error);
                continue;
            }
            undefined_conditions(*job.file, {&job});
        }
    }

  private:
    std::vector<const Injection*> injections(const SourceFile& f) const {
        std::vector<const Injection*> out;
        for (const auto& inj : r_.injections)
            if (inj.source == f.kernel_name())
                out.push_back(&inj);
        return out;
    }

    const ScannedSource& scanned(const std::string& name) {
        auto it = scans_.find(name);
        if (it == scans_.end()) {
            const SourceFile* f = sources_.find(name);
            it = scans_.emplace(name, f ? scan(f->text) : ScannedSource{}).first;
        }
        return it->second;
    }

    std::string path_of(const std::string& name) const {
        const SourceFile* f = sources_.find(name);
        return f ? f->path : name;
    }

    void kernel(const SourceFile& f, const std::vector<const ParseJob*>& units) {
        undefined_conditions(f, units);
        unread_injections(f, units);
        disagreeing_defaults(f, *units.front()->unit);
    }

    // KJ003
    void undefined_conditions(const SourceFile& f, const std::vector<const ParseJob*>& units) {
        std::set<std::string> defined, files;
        for (const auto* u : units) {
            for (const auto& m : u->unit->macros)
                defined.insert(m.name);
            files.insert(u->unit->files.begin(), u->unit->files.end());
        }
        for (const Injection* inj : injections(f))
            for (const auto& [name, _] : inj->defines)
                defined.insert(name);
        // A name defined in any branch counts: the rule is about names defined nowhere.
        for (const auto& name : files)
            for (const auto& d : scanned(name).directives)
                if (d.name == "define" && !d.args.empty())
                    defined.insert(d.args[0].text);
        for (const auto& name : files)
            for (const auto& d : scanned(name).directives) {
                if (d.name != "if" && d.name != "elif")
                    continue;
                for (const PpToken* t : condition_names(d))
                    if (!defined.contains(t->text))
                        out_.push_back({path_of(name), t->line, t->column, Severity::error, "KJ003",
                                        "#" + d.name + " reads " + t->text +
                                            ", which is neither defined in the source nor "
                                            "injected: it evaluates to 0"});
            }
    }

    // KJ002
    void unread_injections(const SourceFile& f, const std::vector<const ParseJob*>& units) {
        for (const Injection* inj : injections(f)) {
            const auto unit = std::find_if(units.begin(), units.end(), [&](const ParseJob* u) {
                return u->defines == inj->defines;
            });
            if (unit == units.end())
                continue;
            const ParsedUnit& u = *(*unit)->unit;
            if (u.fatal) {
                notes_.push_back(f.path + ": KJ002 not checked for kernel '" + inj->spec +
                                 "': " + (u.errors.empty() ? "fatal error" : u.errors.front()));
                continue;
            }
            const std::set<std::string> read = read_macros(u);
            std::set<std::string> known = read;
            for (const auto& name : u.files)
                tested_names(scanned(name), known);
            std::vector<std::string> candidates;
            for (const auto& name : known)
                if (!is_reserved(name) && !inj->defines.contains(name) &&
                    std::none_of(u.macros.begin(), u.macros.end(), [&](const MacroDef& m) {
                        return m.name == name && m.function_like;
                    }))
                    candidates.push_back(name);
            for (const auto& [name, value] : inj->defines) {
                if (read.contains(name))
                    continue;
                const auto where = inj->where.find(name);
                const auto [line, column] =
                    where == inj->where.end() ? std::pair{0, 0} : where->second;
                std::string message = name + "=" + value + " is injected into kernel '" +
                                      inj->spec + "' but " + f.name + " never tests or expands it";
                const std::string near = nearest(name, candidates);
                if (!near.empty())
                    message += "; did you mean " + near + "?";
                out_.push_back({inj->file, line, column, Severity::error, "KJ002", message});
            }
        }
    }

    // KJ004
    void disagreeing_defaults(const SourceFile& f, const ParsedUnit& defaults) {
        const auto injs = injections(f);
        for (const auto& m : defaults.macros) {
            if (m.function_like || m.pos.file.empty())
                continue;
            std::vector<std::pair<const Injection*, std::string>> production;
            for (const Injection* inj : injs)
                if (const auto it = inj->defines.find(m.name); it != inj->defines.end())
                    production.emplace_back(inj, it->second);
            if (production.empty() || !guarded_default(scanned(m.pos.file), m.name, m.pos.line))
                continue;
            const bool agrees =
                std::any_of(production.begin(), production.end(),
                            [&](const auto& p) { return same_value(m.body, tokenize(p.second)); });
            if (agrees)
                continue;
            std::string values;
            for (std::size_t i = 0; i < production.size() && i < 3; ++i)
                values += (i ? ", " : "") + production[i].second + " for kernel '" +
                          production[i].first->spec + "' in " +
                          std::filesystem::path(production[i].first->file).filename().string();
            if (production.size() > 3)
                values += ", ...";
            out_.push_back({path_of(m.pos.file), m.pos.line, m.pos.column, Severity::warning,
                            "KJ004",
                            "default " + m.name + "=" + join(m.body) +
                                " matches no production value (" + values +
                                "): a build without the injected value runs another "
                                "configuration"});
        }
    }

    const LintRequest& r_;
    const SourceSet& sources_;
    std::vector<Finding>& out_;
    std::vector<std::string>& notes_;
    std::map<std::string, ScannedSource> scans_;
};

} // namespace

std::string Finding::format() const {
    std::string out = path;
    if (line > 0) {
        out += ":" + std::to_string(line);
        if (column > 0)
            out += ":" + std::to_string(column);
    }
    out += severity == Severity::error ? ": error: " : ": warning: ";
    return out + message + " [" + rule + "]";
}

const std::vector<Rule>& rules() {
    return kRules;
}

ScannedSource scan(std::string_view text) {
    return Lexer(text).run();
}

std::vector<std::string> tokenize(std::string_view text) {
    return Lexer(text).tokens();
}

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
    return Evaluator(std::move(flat)).run();
}

std::string nearest(std::string_view name, const std::vector<std::string>& candidates) {
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    std::size_t best = limit + 1;
    std::string out;
    for (const auto& c : candidates) {
        if (c == name)
            continue;
        const std::size_t d = edit_distance(name, c);
        if (d < best || (d == best && c < out)) {
            best = d;
            out = c;
        }
    }
    return out;
}

std::vector<Finding> lint_text(const SourceFile& file, const SourceSet& sources) {
    const ScannedSource scanned = scan(file.text);
    std::vector<Finding> out;
    lint_continuations(file, scanned, out);
    lint_directives(file, scanned, sources, out);
    return out;
}

std::vector<Injection> load_injections(const std::filesystem::path& shape_file) {
    const ShapeFile shape = ShapeFile::load(shape_file);
    // ShapeFile keeps no positions; the same file, parsed again, says where each define is.
    toml::table root;
    try {
        root = toml::parse_file(shape_file.string());
    } catch (const std::exception&) {
    }
    const toml::array* tables = root["kernel"].as_array();
    std::vector<Injection> out;
    for (std::size_t i = 0; i < shape.kernels.size(); ++i) {
        const KernelSpec& spec = shape.kernels[i];
        Injection inj;
        inj.spec = spec.name;
        inj.source = spec.source;
        inj.file = shape_file.string();
        try {
            inj.defines = resolve_defines(spec, shape.shape);
        } catch (const ConfigError& e) {
            throw ConfigError(e.message, inj.file);
        }
        const toml::table* t = tables && i < tables->size() ? (*tables)[i].as_table() : nullptr;
        const toml::table* defines = t ? (*t)["defines"].as_table() : nullptr;
        if (defines)
            for (const auto& [key, _] : *defines)
                inj.where[std::string(key.str())] = {static_cast<int>(key.source().begin.line),
                                                     static_cast<int>(key.source().begin.column)};
        out.push_back(std::move(inj));
    }
    return out;
}

std::vector<Injection> find_injections(const std::filesystem::path& dir,
                                       std::vector<std::string>* skipped) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    // Sweep files (*.sweep.toml) hold tuning spaces, not production define sets: `kjit sweep`
    // checks that their defines are read.
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ".toml" &&
            !e.path().filename().string().ends_with(".sweep.toml"))
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<Injection> out;
    for (const auto& f : files) {
        try {
            auto injs = load_injections(f);
            out.insert(out.end(), injs.begin(), injs.end());
        } catch (const ConfigError& e) {
            if (skipped)
                skipped->push_back(f.string() + " is not a shape file (" + e.message +
                                   "): its defines are not checked");
        }
    }
    return out;
}

std::vector<SourceGroup> source_groups(const std::vector<std::string>& paths, bool embedded,
                                       const std::filesystem::path& default_dir) {
    std::error_code ec;
    std::vector<SourceGroup> groups;
    if (embedded) {
        if (!paths.empty())
            throw ConfigError("--embedded takes no FILES");
        SourceGroup g{SourceSet::embedded(), {}, {}};
        if (std::filesystem::is_directory(default_dir, ec))
            g.dir = default_dir;
        groups.push_back(std::move(g));
        return groups;
    }
    const std::vector<std::string> list =
        paths.empty() ? std::vector<std::string>{default_dir.string()} : paths;
    for (const auto& p : list) {
        const std::filesystem::path path(p);
        if (std::filesystem::is_directory(path, ec)) {
            groups.push_back({SourceSet::from_directory(path), {}, path});
            continue;
        }
        if (!std::filesystem::exists(path, ec))
            throw ConfigError("no such file or directory", p);
        if (path.extension() != ".cu" && path.extension() != ".cuh")
            throw ConfigError("not a kernel source (.cu or .cuh)", p);
        std::filesystem::path dir = path.parent_path();
        if (dir.empty())
            dir = ".";
        auto g = std::find_if(groups.begin(), groups.end(), [&](const SourceGroup& x) {
            return !x.targets.empty() && x.dir == dir;
        });
        if (g == groups.end()) {
            groups.push_back(
                {SourceSet::from_directory(dir, path.parent_path().string()), {}, dir});
            g = std::prev(groups.end());
        }
        g->targets.push_back(path.filename().string());
    }
    return groups;
}

LintReport lint(const LintRequest& request) {
    LintReport report;
    const SourceSet& sources = *request.sources;
    std::vector<const SourceFile*> files;
    if (request.targets.empty()) {
        for (const auto& f : sources.files())
            files.push_back(&f);
    } else {
        for (const auto& name : request.targets)
            if (const SourceFile* f = sources.find(name))
                files.push_back(f);
    }
    report.files = files.size();
    for (const SourceFile* f : files) {
        auto found = lint_text(*f, sources);
        report.findings.insert(report.findings.end(), found.begin(), found.end());
    }
    if (request.clang) {
        ClangRules(request, report.findings, report.notes).run(files);
    } else {
        std::string ids;
        for (const auto& r : kRules)
            if (r.needs_clang)
                ids += (ids.empty() ? "" : ", ") + std::string(r.id);
        report.notes.push_back(
            "clang rules (" + ids + ") skipped: " +
            (request.clang_missing.empty() ? "no libclang" : request.clang_missing));
    }
    auto& f = report.findings;
    std::sort(f.begin(), f.end(), [](const Finding& a, const Finding& b) {
        return std::tie(a.path, a.line, a.column, a.rule, a.message) <
               std::tie(b.path, b.line, b.column, b.rule, b.message);
    });
    f.erase(std::unique(f.begin(), f.end()), f.end());
    return report;
}

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

std::string to_json(const std::vector<Finding>& findings) {
    std::string out = "[";
    for (std::size_t i = 0; i < findings.size(); ++i) {
        const Finding& f = findings[i];
        out += std::string(i ? ",\n " : "\n ") + "{\"path\": " + json_string(f.path) +
               ", \"line\": " + std::to_string(f.line) +
               ", \"column\": " + std::to_string(f.column) + ", \"severity\": \"" +
               (f.severity == Severity::error ? "error" : "warning") + "\", \"rule\": \"" + f.rule +
               "\", \"message\": " + json_string(f.message) + "}";
    }
    return out + (findings.empty() ? "]" : "\n]");
}

void print_report(const LintReport& report, bool json) {
    for (const auto& n : report.notes)
        std::fprintf(stderr, "kjit lint: note: %s\n", n.c_str());
    if (json) {
        std::printf("%s\n", to_json(report.findings).c_str());
        return;
    }
    std::size_t errors = 0, warnings = 0;
    for (const auto& f : report.findings) {
        std::printf("%s\n", f.format().c_str());
        ++(f.severity == Severity::error ? errors : warnings);
    }
    std::printf("lint: %zu file(s), %zu error(s), %zu warning(s)\n", report.files, errors,
                warnings);
}

} // namespace kjit::lint
