#include "lint/rules_text.hpp"

#include "lint/macros.hpp"
#include "lint/scanner.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <set>
#include <string_view>

namespace kjit::lint {

namespace {

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

std::size_t indent(std::string_view line) {
    const std::size_t n = line.find_first_not_of(" \t");
    return n == std::string_view::npos ? line.size() : n;
}

// True when a #define body stops where no statement or expression can: after an operator, a
// comma or an open bracket, or right after the header of a `for`, `if`, `while` or `switch`.
bool ends_mid_statement(const std::vector<std::string>& body) {
    static const std::set<std::string_view> dangling = {
        ",", "(", "[", "{", "+", "-", "/", "%", "=", "==", "!=", "<=", ">=", "&&", "||",
        "|", "^", "?", ":", "<<", ">>", "+=", "-=", "*=", "/=", "|=", "&=", "->", "."};
    if (body.empty())
        return false;
    if (dangling.contains(body.back()))
        return true;
    if (body.back() != ")")
        return false;
    int depth = 0;
    for (std::size_t i = body.size(); i-- > 0;) {
        depth += body[i] == ")" ? 1 : body[i] == "(" ? -1 : 0;
        if (depth == 0) {
            if (i == 0)
                return false;
            // `do { ... } while (0)` is a whole statement.
            if (body[i - 1] == "while")
                return i < 2 || body[i - 2] != "}";
            // `_Pragma("unroll")` applies to the statement that follows it.
            return body[i - 1] == "for" || body[i - 1] == "if" || body[i - 1] == "switch" ||
                   body[i - 1] == "_Pragma";
        }
    }
    return false;
}

// The names a line declares: the parameters of a template head (`template <typename T>`) and
// of the function head after it or alone (`__device__ float f(float x) {`, a prototype, or a
// list that goes on past the line), a declaration that starts a statement (`constexpr int N =
// 4;`, `using T = float;`, `struct S { float x; };`) and an enum's names. A line after a
// #define that declares a name it shares with the macro's parameters is code of its own, not
// the macro's lost body. A name counts as declared after a type or a declarator (`float x`,
// `const T* x`, `F&& f`), not alone (`f(x)`, `g(*p)`, `y = x` read theirs).
std::set<std::string> declared_names(const std::vector<std::string>& line) {
    static const std::set<std::string_view> not_a_name = {
        "return", "case",   "throw",   "else",      "do",       "new",      "delete",
        "sizeof", "typeid", "alignof", "co_return", "co_yield", "co_await", "goto"};
    static const std::set<std::string_view> attribute = {"__launch_bounds__", "__align__",
                                                         "alignas", "__attribute__", "__declspec"};
    static const std::set<std::string_view> qualifier = {
        "*", "&", "&&", "const", "volatile", "__restrict__", "restrict"};
    // The line without attributes and their parenthesized arguments.
    std::vector<std::string> tokens;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (attribute.contains(line[i]) && i + 1 < line.size() && line[i + 1] == "(") {
            for (int depth = 0; ++i < line.size();) {
                depth += line[i] == "(" ? 1 : line[i] == ")" ? -1 : 0;
                if (depth == 0)
                    break;
            }
            continue;
        }
        tokens.push_back(line[i]);
    }
    auto word = [&](std::size_t i) {
        return is_identifier(tokens[i]) && !not_a_name.contains(tokens[i]);
    };
    std::set<std::string> out;
    // The list opened at tokens[open]: the names at its own depth right before ',', '=', '['
    // or its end that follow a type or declarator. Returns the index after its end.
    auto list = [&](std::size_t open, bool angle) {
        auto declares = [&](std::size_t i) {
            if (!word(i))
                return false;
            std::size_t j = i - 1;
            while (j > open && qualifier.contains(tokens[j]))
                --j;
            // `...` is three '.' tokens: `typename... T`.
            return j > open && (word(j) || tokens[j] == ">" || tokens[j] == ">>" ||
                                (tokens[j] == "." && tokens[j - 1] == "."));
        };
        int depth = 0;
        for (std::size_t i = open; i < tokens.size(); ++i) {
            const std::string& t = tokens[i];
            const int closes = t == ")" || t == "]" || t == "}" || (angle && t == ">") ? 1
                               : angle && t == ">>"                                    ? 2
                                                                                       : 0;
            if (t == "(" || t == "[" || t == "{" || (angle && t == "<")) {
                if (depth == 1 && t == "[" && declares(i - 1)) // `float x[4]`
                    out.insert(tokens[i - 1]);
                ++depth;
            } else if (closes > 0) {
                if (depth == 1 && declares(i - 1))
                    out.insert(tokens[i - 1]);
                if ((depth -= closes) <= 0)
                    return i + 1;
            } else if (depth == 1 && (t == "," || t == "=") && declares(i - 1)) {
                out.insert(tokens[i - 1]);
            }
        }
        // A list that goes on past the line.
        if (depth == 1 && tokens.size() > open + 1 && declares(tokens.size() - 1))
            out.insert(tokens.back());
        return tokens.size();
    };
    std::size_t from = 0;
    if (tokens.size() > 1 && tokens[0] == "template" && tokens[1] == "<")
        from = list(1, true);
    // A function head: `type name (` or `type operator* (`, before any '='.
    for (std::size_t i = from + 2; i < tokens.size() && tokens[i - 1] != "="; ++i)
        if (tokens[i] == "(" &&
            ((word(i - 1) &&
              (word(i - 2) || qualifier.contains(tokens[i - 2]) || tokens[i - 2] == ">" ||
               tokens[i - 2] == ">>" || tokens[i - 2] == "::")) ||
             tokens[i - 2] == "operator")) {
            list(i, false);
            break;
        }
    // A declaration at a statement's start: specifiers and a type (words, '::', template
    // arguments, '*', '&'), then the name, before '=', ';', '[', ',', '{', ':' or the end (not
    // '(': a function's own name, which a macro that defines functions takes as a parameter).
    static const std::set<std::string_view> ends = {"=", ";", "[", ",", "{", ":"};
    for (std::size_t s = 0; s < tokens.size(); ++s) {
        if (s > 0 && tokens[s - 1] != "{" && tokens[s - 1] != ";")
            continue;
        std::size_t i = s, words = 0;
        while (i < tokens.size()) {
            if (word(i)) {
                ++words;
                ++i;
            } else if (tokens[i] == "::" || qualifier.contains(tokens[i])) {
                ++i;
            } else if (tokens[i] == "<" && words > 0) {
                for (int depth = 0; i < tokens.size(); ++i) {
                    depth += tokens[i] == "<"    ? 1
                             : tokens[i] == ">"  ? -1
                             : tokens[i] == ">>" ? -2
                                                 : 0;
                    if (depth <= 0)
                        break;
                }
                ++i;
            } else {
                break;
            }
        }
        if (words >= 2 && i <= tokens.size() && word(i - 1) &&
            (i >= tokens.size() || ends.contains(tokens[i])))
            out.insert(tokens[i - 1]);
    }
    // An enum's names: the words right after its '{' and each ','.
    if (!tokens.empty() && tokens[0] == "enum")
        for (std::size_t i = 1; i < tokens.size(); ++i)
            if (word(i) && (tokens[i - 1] == "{" || tokens[i - 1] == ","))
                out.insert(tokens[i]);
    return out;
}

bool in_comment(const ScannedSource& s, std::size_t offset) {
    auto it = std::upper_bound(s.comments.begin(), s.comments.end(), offset,
                               [](std::size_t o, const auto& range) { return o < range.first; });
    return it != s.comments.begin() && offset < std::prev(it)->second;
}

void lint_continuations(const SourceFile& file, const ScannedSource& scanned,
                        std::vector<Diagnostic>& out) {
    const auto lines = physical_lines(file.text);
    auto add = [&](int line, int column, std::string message) {
        out.push_back({file.path, line, column, Severity::error, std::move(message), "KJ001"});
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
    // The continuation lost on a body's last line, seen from the line after the body: it is
    // indented deeper than the body's last line and the body stops mid-statement, or it is
    // indented as the body (deeper than the #define and than the namespace's other code),
    // outside any function or class body, and reads one of the macro's parameters, which only
    // the macro can mean there (a function or template head declaring the name is not such a
    // read); a one-line #define counts only with an empty body (its first '\\' lost). Inside a
    // function, code after a local macro reads the function's own names, often the same ones.
    for (const auto& d : scanned.directives) {
        if (d.name != "define" || d.end_line >= static_cast<int>(lines.size()))
            continue;
        const auto def = parse_define(d);
        const Line& last = lines[static_cast<std::size_t>(d.end_line - 1)];
        const Line& next = lines[static_cast<std::size_t>(d.end_line)];
        const std::size_t first = indent(next.text);
        // A next line that ends in '\\' is reported above.
        if (!def || first == next.text.size() || directive_lines.contains(d.end_line + 1) ||
            in_comment(scanned, next.begin + first) || next.text.ends_with('\\'))
            continue;
        // The macro used right away (`EACH(t) acc += a[t];`) is code that follows it.
        const std::string_view rest = next.text.substr(first);
        if (rest.starts_with(def->first) &&
            (rest.size() == def->first.size() ||
             !(std::isalnum(static_cast<unsigned char>(rest[def->first.size()])) ||
               rest[def->first.size()] == '_')))
            continue;
        const std::string name = def->first, line = std::to_string(d.line),
                          end = std::to_string(d.end_line);
        const std::string tail =
            "missing '\\' at the end of line " + end + "; this line is not part of the macro";
        if (d.end_line > d.line && first > indent(last.text) &&
            ends_mid_statement(def->second.body)) {
            add(d.end_line + 1, static_cast<int>(first) + 1,
                "the #define of " + name + " (line " + line + ") stops mid-statement on line " +
                    end + " and this deeper-indented line goes on with it: " + tail);
            continue;
        }
        // A '\\' followed by whitespace on that line is reported as such below.
        const std::size_t directive_indent =
            indent(lines[static_cast<std::size_t>(d.line - 1)].text);
        const std::size_t last_char = last.text.find_last_not_of(" \t\f\v");
        // Inside a namespace whose code is indented, that indentation is the namespace's.
        if (d.scope > 0 || !questioned(d) || first <= directive_indent ||
            static_cast<int>(first) <= d.block_indent || first < indent(last.text) ||
            (last_char != std::string_view::npos && last.text[last_char] == '\\'))
            continue;
        const auto tokens = tokenize(rest);
        const auto declared = declared_names(tokens);
        std::vector<std::string> params;
        std::ranges::copy_if(def->second.params, std::back_inserter(params),
                             [&](const std::string& p) { return !declared.contains(p); });
        // A member's name (`v.x`, `p->x`) is no read of a parameter.
        const auto read = std::ranges::find_if(tokens, [&](const std::string& t) {
            const auto k = static_cast<std::size_t>(&t - tokens.data());
            return std::ranges::find(params, t) != params.end() &&
                   (k == 0 || (tokens[k - 1] != "." && tokens[k - 1] != "->"));
        });
        if (read == tokens.end())
            continue;
        add(d.end_line + 1, static_cast<int>(first) + 1,
            "the #define of " + name + " (line " + line + ") ends on line " + end +
                ", but this line, indented as its body, reads its parameter '" + *read +
                "': " + tail);
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

void lint_conditionals(const SourceFile& file, const ScannedSource& scanned,
                       std::vector<Diagnostic>& out) {
    auto add = [&](int line, int column, std::string message) {
        out.push_back({file.path, line, column, Severity::error, std::move(message), "KJ005"});
    };
    struct Open {
        const Directive* d;
        bool seen_else;
    };
    std::vector<Open> stack;
    for (const auto& d : scanned.directives) {
        if (is_conditional_start(d.name)) {
            stack.push_back({&d, false});
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
        }
    }
    for (const auto& o : stack)
        add(o.d->line, o.d->column,
            "unterminated #" + o.d->name + ": no #endif before the end of the file");
}

// KJ007: a #define body whose brackets do not balance, most often a body cut short by a line
// continuation missing on one of its lines (the rest of the body became top-level code).
void lint_define_brackets(const SourceFile& file, const ScannedSource& scanned,
                          std::vector<Diagnostic>& out) {
    for (const auto& d : scanned.directives) {
        if (d.name != "define" || d.args.empty())
            continue;
        const auto def = parse_define(d);
        if (!def)
            continue;
        // A one-line body may open a brace on purpose (`#define BEGIN_NS namespace x {`);
        // parentheses and square brackets balance in any body.
        const bool multi_line = d.end_line > d.line;
        const std::size_t first = d.args.size() - def->second.body.size();
        std::vector<const PpToken*> open;
        const PpToken* stray = nullptr;
        for (std::size_t i = first; i < d.args.size() && !stray; ++i) {
            const PpToken& t = d.args[i];
            if (t.text.size() != 1 || (!multi_line && (t.text == "{" || t.text == "}")))
                continue;
            const char c = t.text[0];
            if (c == '(' || c == '[' || c == '{') {
                open.push_back(&t);
            } else if (c == ')' || c == ']' || c == '}') {
                const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
                if (open.empty() || open.back()->text[0] != want)
                    stray = &t;
                else
                    open.pop_back();
            }
        }
        // A scope's opener or closer split over lines on purpose (`namespace tensorrt_llm { \\`
        // then a nested opener; a closer that opens nothing) is no cut body.
        auto opens_scope = [&](const PpToken* brace) {
            const auto at = std::find_if(d.args.begin(), d.args.end(),
                                         [&](const PpToken& t) { return &t == brace; });
            for (auto t = at; t != d.args.begin() + static_cast<std::ptrdiff_t>(first);) {
                --t;
                if (t->text == "namespace" || t->text == "extern")
                    return true;
                if (!(is_identifier(t->text) || t->text == "::" || t->text.starts_with('"')))
                    return false;
            }
            return false;
        };
        const bool opens_none =
            std::none_of(d.args.begin() + static_cast<std::ptrdiff_t>(first), d.args.end(),
                         [](const PpToken& t) { return t.text == "{"; });
        if ((stray && stray->text == "}" && opens_none) ||
            (!stray && !open.empty() && open.back()->text == "{" &&
             std::all_of(open.begin(), open.end(), opens_scope)))
            continue;
        const std::string& name = def->first;
        const std::string end = std::to_string(d.end_line);
        if (stray)
            out.push_back({file.path, stray->line, stray->column, Severity::error,
                           "unbalanced '" + stray->text + "' in the #define of " + name +
                               ": its body (ending on line " + end + ") never opened it",
                           "KJ007"});
        else if (!open.empty())
            out.push_back({file.path, open.back()->line, open.back()->column, Severity::error,
                           "unbalanced '" + open.back()->text + "' in the #define of " + name +
                               ": its body ends on line " + end +
                               " without closing it; a line continuation '\\' may be "
                               "missing at the end of line " + end,
                           "KJ007"});
    }
}

// KJ009: a `//` comment ending in a line splice takes the next line with it. Where that line
// is code, the code silently disappears (NVRTC, like gcc without -Wcomment, says nothing).
void lint_comment_splices(const SourceFile& file, const ScannedSource& scanned,
                          std::vector<Diagnostic>& out) {
    const auto lines = physical_lines(file.text);
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        const std::string_view t = lines[i].text;
        if (t.empty() || t.back() != '\\')
            continue;
        const std::size_t at = lines[i].begin + t.size() - 1;
        auto c = std::upper_bound(scanned.comments.begin(), scanned.comments.end(), at,
                                  [](std::size_t o, const auto& r) { return o < r.first; });
        if (c == scanned.comments.begin() || at >= std::prev(c)->second)
            continue;
        c = std::prev(c);
        if (file.text.compare(c->first, 2, "//") != 0)
            continue; // a /* */ comment ends where it says
        // The line taken: harmless when blank or itself a comment (a // line, or one /* */ that
        // closes on it).
        const std::string_view next = lines[i + 1].text;
        const std::size_t first = indent(next);
        const std::string_view rest = next.substr(first);
        const std::size_t last = rest.find_last_not_of(" \t");
        if (first == next.size() || rest.starts_with("//") ||
            (rest.starts_with("/*") && rest.find("*/") == last - 1))
            continue;
        out.push_back({file.path, static_cast<int>(i) + 1, static_cast<int>(t.size()),
                       Severity::error,
                       "this // comment ends with '\\', which splices line " +
                           std::to_string(i + 2) +
                           " into the comment: that line is never compiled; end the comment "
                           "with another character",
                       "KJ009"});
    }
}

// KJ006
void lint_bom(const SourceFile& file, const ScannedSource& scanned,
              std::vector<Diagnostic>& out) {
    if (scanned.bom)
        out.push_back({file.path, 1, 1, Severity::error,
                       "the file starts with a UTF-8 byte-order mark: NVRTC reads it as an "
                       "unrecognized token; save the file without it",
                       "KJ006"});
}

// KJ010: NVRTC takes a byte 0xFF as the end of the source (EOF read through a signed char):
// every line from there on is dropped, the kernels in them with it, and the compile succeeds.
void lint_eof_byte(const SourceFile& file, std::vector<Diagnostic>& out) {
    const std::size_t at = file.text.find('\xff');
    if (at == std::string::npos)
        return;
    const auto line =
        std::count(file.text.begin(), file.text.begin() + static_cast<long>(at), '\n');
    const std::size_t begin = file.text.rfind('\n', at);
    const std::size_t col = begin == std::string::npos ? at + 1 : at - begin;
    const auto lines =
        std::count(file.text.begin(), file.text.end(), '\n') + (file.text.ends_with('\n') ? 0 : 1);
    out.push_back({file.path, static_cast<int>(line) + 1, static_cast<int>(col), Severity::error,
                   "byte 0xFF (not UTF-8): NVRTC reads it as the end of the file, so the rest of "
                   "this line and the " +
                       std::to_string(lines - line - 1) +
                       " line(s) after it are never compiled; save the file as UTF-8",
                   "KJ010"});
}

} // namespace

std::vector<Diagnostic> lint_text(const SourceFile& file) {
    const ScannedSource scanned = scan(file.text);
    std::vector<Diagnostic> out;
    lint_bom(file, scanned, out);
    lint_eof_byte(file, out);
    lint_continuations(file, scanned, out);
    lint_conditionals(file, scanned, out);
    lint_define_brackets(file, scanned, out);
    lint_comment_splices(file, scanned, out);
    return out;
}

} // namespace kjit::lint
