#include "lint/scanner.hpp"

#include <algorithm>

namespace kjit::lint {

namespace {

bool is_ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
bool is_ident_char(char c) {
    return is_ident_start(c) || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

constexpr std::string_view kBom = "\xEF\xBB\xBF";

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
    std::size_t i = 0;
    if (t.starts_with(kBom)) {
        i = kBom.size();
        column += static_cast<int>(kBom.size());
    }
    for (; i < t.size(); ++i) {
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
        out.bom = text_.starts_with(kBom);
        bool line_start = true;
        bool in_directive = false, want_name = false, spaced = false;
        // The code's open braces, each for a namespace or `extern "C"` block its index in
        // `indents` (the least indentation of its code, -1 before its first line) and kBody for
        // any other; the directives directly in such a block, with its index; the last line of a
        // questioned #define or of the lines of code that follow it in its block without a
        // break (a blank line, a comment or a directive); the tokens of the statement so far.
        constexpr int kBody = -1;
        std::vector<int> braces, indents;
        std::vector<std::pair<std::size_t, int>> in_block;
        int after_define = -1;
        std::size_t run_depth = 0; // the braces open around that #define
        std::vector<std::string> statement;
        while (p_ < l_.size()) {
            const char c = l_[p_].c;
            if (c == '\n') {
                if (in_directive) {
                    out.directives.back().end_line = l_[p_].line;
                    if (questioned(out.directives.back()) && out.directives.back().scope == 0) {
                        after_define = l_[p_].line;
                        run_depth = braces.size();
                    }
                }
                in_directive = false;
                line_start = true;
                ++p_;
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                spaced = true;
                ++p_;
                continue;
            }
            if (c == '/' && (at(1) == '/' || at(1) == '*'))
                spaced = true;
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
                d.scope = static_cast<int>(std::count(braces.begin(), braces.end(), kBody));
                if (d.scope == 0 && !braces.empty())
                    in_block.emplace_back(out.directives.size(), braces.back());
                out.directives.push_back(std::move(d));
                in_directive = want_name = true;
                line_start = false;
                ++p_;
                continue;
            }
            const bool starts_line = line_start;
            line_start = false;
            const bool header_name = in_directive && !want_name && c == '<' &&
                                     out.directives.back().args.empty() &&
                                     (out.directives.back().name == "include" ||
                                      out.directives.back().name == "include_next");
            PpToken tok = next_token(header_name);
            tok.spaced = spaced;
            spaced = false;
            if (!in_directive) {
                // The run ends at the '}' that closes the #define's block, and where a
                // namespace or `extern "C"` block opens (below).
                const bool after = starts_line && tok.line == after_define + 1 &&
                                   !(tok.text == "}" && braces.size() <= run_depth);
                after_define = after ? tok.line : starts_line ? -1 : after_define;
                if (starts_line && tok.text != "}" && !after && !braces.empty() &&
                    braces.back() != kBody) {
                    int& indent = indents[static_cast<std::size_t>(braces.back())];
                    indent = indent < 0 ? tok.column - 1 : std::min(indent, tok.column - 1);
                }
                if (tok.text == "{") {
                    // `extern "C" {` opens a block; `extern "C" __global__ void k() {` a body.
                    const bool block =
                        !statement.empty() && (statement[0] == "namespace" ||
                                               (statement[0] == "extern" && statement.size() == 2 &&
                                                statement[1].starts_with('"')) ||
                                               (statement[0] == "inline" && statement.size() > 1 &&
                                                statement[1] == "namespace"));
                    braces.push_back(block ? static_cast<int>(indents.size()) : kBody);
                    if (block) {
                        indents.push_back(-1);
                        after_define = -1;
                    }
                    statement.clear();
                } else if (tok.text == "}" || tok.text == ";") {
                    if (tok.text == "}" && !braces.empty())
                        braces.pop_back();
                    statement.clear();
                } else if (statement.size() < 3) {
                    statement.push_back(std::move(tok.text));
                }
                continue;
            }
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
        for (const auto& [directive, block] : in_block)
            out.directives[directive].block_indent = indents[static_cast<std::size_t>(block)];
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
            if (p_ < l_.size() && l_[p_].c == '"' && is_raw_prefix(tok.text))
                raw_string(tok.text);
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

    static bool is_raw_prefix(std::string_view s) {
        return s == "R" || s == "u8R" || s == "uR" || s == "UR" || s == "LR";
    }

    // R"delim( ... )delim": newlines, quotes and '#' inside belong to the literal.
    void raw_string(std::string& text) {
        std::string delim;
        std::size_t q = p_ + 1;
        while (q < l_.size() && q - p_ <= 17 && l_[q].c != '(' && l_[q].c != '\n' &&
               l_[q].c != '"' && l_[q].c != ' ')
            delim += l_[q++].c;
        if (q >= l_.size() || l_[q].c != '(')
            return; // not a raw string after all: the quote starts an ordinary literal
        const std::string close = ")" + delim + "\"";
        std::size_t end = q + 1;
        while (end < l_.size()) {
            if (l_[end].c == ')' && end + close.size() <= l_.size()) {
                std::size_t k = 0;
                while (k < close.size() && l_[end + k].c == close[k])
                    ++k;
                if (k == close.size()) {
                    end += close.size();
                    break;
                }
            }
            ++end;
        }
        for (; p_ < end && p_ < l_.size(); ++p_)
            text += l_[p_].c;
    }

    std::string_view text_;
    std::vector<LChar> l_;
    std::size_t p_ = 0;
};

} // namespace

bool questioned(const Directive& d) {
    if (d.name != "define")
        return false;
    if (d.end_line > d.line)
        return true;
    const auto& a = d.args;
    return a.size() > 2 && a[1].text == "(" && !a[1].spaced &&
           std::find_if(a.begin() + 2, a.end(), [](const PpToken& t) { return t.text == ")"; }) ==
               a.end() - 1;
}

ScannedSource scan(std::string_view text) {
    return Lexer(text).run();
}

std::vector<std::string> tokenize(std::string_view text) {
    return Lexer(text).tokens();
}

bool is_identifier(std::string_view s) {
    return !s.empty() && is_ident_start(s[0]);
}

bool is_reserved(std::string_view s) {
    return s.size() >= 2 && s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'));
}

bool is_conditional_start(std::string_view name) {
    return name == "if" || name == "ifdef" || name == "ifndef";
}

bool is_conditional_else(std::string_view name) {
    return name == "elif" || name == "elifdef" || name == "elifndef" || name == "else";
}

} // namespace kjit::lint
