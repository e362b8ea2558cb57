#include "jit/source_lines.hpp"

#include <algorithm>

namespace kjit {

namespace {

constexpr auto npos = std::string_view::npos;

// ASCII, as the preprocessor reads a source (no locale).
bool digit(char c) {
    return c >= '0' && c <= '9';
}

bool ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

bool ident_char(char c) {
    return ident_start(c) || digit(c);
}

bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/// The end of the "..." or '...' literal whose quote is at `i`: past its closing quote, or at
/// the end of its line when it has none.
std::size_t quoted_end(std::string_view t, std::size_t i) {
    const char quote = t[i];
    for (++i; i < t.size() && t[i] != quote && t[i] != '\n'; ++i)
        if (t[i] == '\\' && i + 1 < t.size() && t[i + 1] != '\n')
            ++i;
    return i < t.size() && t[i] == quote ? i + 1 : i;
}

/// The end of the raw string whose opening quote is at `i` (`R"delim( ... )delim"`), the text's
/// end when it is never closed; npos when no raw-string delimiter follows the quote.
std::size_t raw_end(std::string_view t, std::size_t i) {
    const std::size_t open = t.find('(', i + 1);
    if (open == npos || open - i - 1 > 16)
        return npos;
    const std::string_view delim = t.substr(i + 1, open - i - 1);
    if (delim.find_first_of(" \t\v\f\r\n\\)\"") != npos)
        return npos;
    const std::string close = ")" + std::string(delim) + "\"";
    const std::size_t end = t.find(close, open + 1);
    return end == npos ? t.size() : end + close.size();
}

/// The end of the token that begins with the identifier [i, j): past the literal it prefixes
/// (`u8"..."`, `L'x'`, `R"(...)"`), else j.
std::size_t prefixed_end(std::string_view t, std::size_t i, std::size_t j) {
    if (j >= t.size() || (t[j] != '"' && t[j] != '\''))
        return j;
    const std::string_view prefix = t.substr(i, j - i);
    if (t[j] == '"' &&
        (prefix == "R" || prefix == "LR" || prefix == "uR" || prefix == "UR" || prefix == "u8R"))
        if (const std::size_t end = raw_end(t, j); end != npos)
            return end;
    if (prefix == "L" || prefix == "u" || prefix == "U" || prefix == "u8")
        return quoted_end(t, j);
    return j;
}

/// The end of the pp-number at `i` (a digit, or '.' before one): `0x1Fu`, `1e-5f`, `1'000`.
std::size_t number_end(std::string_view t, std::size_t i) {
    for (++i; i < t.size(); ++i) {
        const char c = t[i], before = t[i - 1];
        if (ident_char(c) || c == '.')
            continue;
        if ((c == '+' || c == '-') &&
            (before == 'e' || before == 'E' || before == 'p' || before == 'P'))
            continue;
        if (c == '\'' && i + 1 < t.size() && ident_char(t[i + 1]))
            continue; // a digit separator
        break;
    }
    return i;
}

/// The end of the token at `i`, and whether it is an identifier, number or literal (any other
/// character is a token of its own).
std::size_t token_end(std::string_view t, std::size_t i, Token::Kind& kind) {
    const char c = t[i];
    if (ident_start(c)) {
        std::size_t j = i + 1;
        while (j < t.size() && ident_char(t[j]))
            ++j;
        const std::size_t end = prefixed_end(t, i, j);
        kind = end == j ? Token::Kind::identifier : Token::Kind::literal;
        return end;
    }
    if (digit(c) || (c == '.' && i + 1 < t.size() && digit(t[i + 1]))) {
        kind = Token::Kind::number;
        return number_end(t, i);
    }
    if (c == '"' || c == '\'') {
        kind = Token::Kind::literal;
        return quoted_end(t, i);
    }
    kind = Token::Kind::punctuator;
    return i + 1;
}

} // namespace

std::string splice_lines(std::string_view text, std::vector<std::size_t>* splices) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\') {
            std::size_t j = i + 1;
            if (j < text.size() && text[j] == '\r')
                ++j;
            if (j < text.size() && text[j] == '\n') {
                if (splices)
                    splices->push_back(out.size());
                i = j;
                continue;
            }
        }
        out += text[i];
    }
    return out;
}

LogicalSource::LogicalSource(std::string_view raw) {
    // Phase 2, keeping where each splice was for the line numbers.
    std::vector<std::size_t> splices;
    const std::string t = splice_lines(raw, &splices);
    int newlines = 0;
    std::size_t spliced = 0;
    const auto line_at = [&](std::size_t offset) {
        while (spliced < splices.size() && splices[spliced] <= offset)
            ++spliced;
        return 1 + newlines + static_cast<int>(spliced);
    };
    // Offsets into text_ while it grows; views once it is whole.
    struct Span {
        Token::Kind kind;
        std::size_t begin, size;
    };
    struct Line {
        int line;
        std::size_t begin, first_token;
    };
    std::vector<Span> spans;
    std::vector<Line> lines;
    text_.reserve(t.size() + 1);
    Line current{line_at(0), 0, 0};
    for (std::size_t i = 0; i < t.size();) {
        if (t[i] == '\n') {
            lines.push_back(current);
            text_ += '\n';
            ++newlines;
            current = {line_at(++i), text_.size(), spans.size()};
            continue;
        }
        const bool comment =
            t[i] == '/' && i + 1 < t.size() && (t[i + 1] == '/' || t[i + 1] == '*');
        if (comment && t[i + 1] == '/') {
            i = std::min(t.find('\n', i), t.size());
            text_ += ' ';
            continue;
        }
        if (comment) {
            const std::size_t close = t.find("*/", i + 2);
            const std::size_t end = close == npos ? t.size() : close + 2;
            const auto lines_in = std::count(t.begin() + static_cast<std::ptrdiff_t>(i),
                                             t.begin() + static_cast<std::ptrdiff_t>(end), '\n');
            newlines += static_cast<int>(lines_in);
            text_ += ' ';
            i = end;
            continue;
        }
        if (blank(t[i])) {
            text_ += t[i++];
            continue;
        }
        // A line is where its first token is: a comment over lines or a splice may come first.
        if (spans.size() == current.first_token)
            current.line = line_at(i);
        Token::Kind kind;
        const std::size_t end = token_end(t, i, kind);
        spans.push_back({kind, text_.size(), end - i});
        text_.append(t, i, end - i);
        if (kind == Token::Kind::literal) // a raw string may span lines
            newlines +=
                static_cast<int>(std::count(t.begin() + static_cast<std::ptrdiff_t>(i),
                                            t.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
        i = end;
    }
    if (text_.size() > current.begin) {
        lines.push_back(current);
        text_ += '\n';
    }

    // text_ is whole: no more growth moves it, so views into it hold.
    const std::string_view text = text_;
    tokens_.reserve(spans.size());
    for (const Span& s : spans)
        tokens_.push_back({s.kind, text.substr(s.begin, s.size)});
    const std::span<const Token> all(tokens_);
    lines_.reserve(lines.size());
    for (std::size_t k = 0; k < lines.size(); ++k) {
        const bool last = k + 1 == lines.size();
        const std::size_t end = last ? text.size() : lines[k + 1].begin;
        const std::size_t end_token = last ? tokens_.size() : lines[k + 1].first_token;
        LogicalLine l;
        l.line = lines[k].line;
        l.text = text.substr(lines[k].begin, end - 1 - lines[k].begin);
        l.tokens = all.subspan(lines[k].first_token, end_token - lines[k].first_token);
        // `#`, or the digraph `%:` (two tokens, nothing between them).
        if (!l.tokens.empty() && l.tokens[0].text == "#") {
            l.is_directive = true;
            l.directive = l.tokens.subspan(1);
        } else if (l.tokens.size() >= 2 && l.tokens[0].text == "%" && l.tokens[1].text == ":" &&
                   l.tokens[1].text.data() == l.tokens[0].text.data() + 1) {
            l.is_directive = true;
            l.directive = l.tokens.subspan(2);
        }
        lines_.push_back(l);
    }
}

std::optional<std::string_view> header_name(std::string_view operand) {
    std::size_t p = 0;
    while (p < operand.size() && blank(operand[p]))
        ++p;
    if (p >= operand.size() || (operand[p] != '"' && operand[p] != '<'))
        return std::nullopt;
    const char stops[] = {operand[p] == '"' ? '"' : '>', '\n'};
    const std::size_t end = operand.find_first_of(std::string_view(stops, 2), p + 1);
    if (end == npos || operand[end] == '\n')
        return std::nullopt;
    return operand.substr(p + 1, end - p - 1);
}

} // namespace kjit
