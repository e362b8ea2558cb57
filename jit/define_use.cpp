#include "jit/define_use.hpp"

#include "core/error.hpp"
#include "core/flags.hpp"
#include "core/names.hpp"
#include "core/warnings.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

namespace kjit {

namespace {

bool ident_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// Adds the identifiers of `text` (outside comments, string and character literals) to
/// `names`, and those on preprocessor lines to `macros` too.
void scan(std::string_view text, std::set<std::string_view>& names,
          std::set<std::string_view>& macros) {
    bool directive = false, line_start = true;
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '\n') {
            // A directive continues over a backslash-newline.
            if (!(i > 0 && text[i - 1] == '\\'))
                directive = false;
            line_start = true;
            ++i;
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            while (i < text.size() && text[i] != '\n')
                ++i;
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            const std::size_t end = text.find("*/", i + 2);
            i = end == std::string_view::npos ? text.size() : end + 2;
            continue;
        }
        if (c == '"' || c == '\'') {
            for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i)
                if (text[i] == '\\')
                    ++i;
            ++i;
            line_start = false;
            continue;
        }
        if (c == '#' && line_start)
            directive = true;
        if (ident_start(c)) {
            const std::size_t begin = i;
            while (i < text.size() && ident_char(text[i]))
                ++i;
            const std::string_view word = text.substr(begin, i - begin);
            names.insert(word);
            if (directive)
                macros.insert(word);
            line_start = false;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            // A number's suffix (1e5f, 0x1Fu) is no identifier.
            while (i < text.size() && (ident_char(text[i]) || text[i] == '.'))
                ++i;
            line_start = false;
            continue;
        }
        if (c != ' ' && c != '\t' && c != '\r')
            line_start = false;
        ++i;
    }
}

/// The text with its comments blanked (newlines kept), string and character literals as they
/// are.
std::string without_comments(std::string_view text) {
    std::string out(text);
    for (std::size_t i = 0; i < out.size();) {
        const char c = out[i];
        if (c == '/' && i + 1 < out.size() && (out[i + 1] == '/' || out[i + 1] == '*')) {
            const bool line = out[i + 1] == '/';
            const std::size_t end = line ? out.find('\n', i) : out.find("*/", i + 2);
            const std::size_t stop = end == std::string::npos ? out.size() : line ? end : end + 2;
            for (; i < stop; ++i)
                if (out[i] != '\n')
                    out[i] = ' ';
        } else if (c == '"' || c == '\'') {
            for (++i; i < out.size() && out[i] != c && out[i] != '\n'; ++i)
                if (out[i] == '\\')
                    ++i;
            ++i;
        } else {
            ++i;
        }
    }
    return out;
}

/// The words (identifiers, numbers) and punctuation characters of a directive's text.
std::vector<std::string> directive_tokens(std::string_view text) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < text.size();) {
        if (ident_char(text[i])) {
            const std::size_t begin = i;
            while (i < text.size() && ident_char(text[i]))
                ++i;
            out.emplace_back(text.substr(begin, i - begin));
        } else {
            if (!std::isspace(static_cast<unsigned char>(text[i])) && text[i] != '\\')
                out.emplace_back(1, text[i]);
            ++i;
        }
    }
    return out;
}

} // namespace

std::map<std::string, int, std::less<>> unguarded_defines(std::string_view text) {
    // A conditional: `name` is undefined in the branch being read when `guards`; `dead` inside
    // an `#if 0` (until its #else).
    struct Frame {
        std::string name;
        bool guards = false, zero = false, dead = false;
    };
    std::vector<Frame> frames;
    std::map<std::string, int, std::less<>> out;
    const std::string clean = without_comments(text);
    int line = 1;
    for (std::size_t i = 0; i < clean.size();) {
        // One logical line: backslash-newlines joined.
        const int start = line;
        std::size_t end = i;
        while (end < clean.size() && !(clean[end] == '\n' && (end == 0 || clean[end - 1] != '\\')))
            line += clean[end++] == '\n';
        const std::string_view logical = std::string_view(clean).substr(i, end - i);
        i = end + 1;
        ++line;
        const std::size_t hash = logical.find_first_not_of(" \t\r\f\v");
        if (hash == std::string_view::npos || logical[hash] != '#')
            continue;
        const std::vector<std::string> t = directive_tokens(logical.substr(hash + 1));
        if (t.empty())
            continue;
        const std::string& d = t[0];
        if (d == "ifndef" || d == "ifdef") {
            frames.push_back({t.size() > 1 ? t[1] : "", d == "ifndef"});
        } else if (d == "if") {
            Frame f;
            // `#if !defined(NAME)`, `#if defined NAME`, `#if 0`: nothing else after.
            const bool negated = t.size() > 1 && t[1] == "!";
            std::size_t k = negated ? 2 : 1;
            if (t.size() == 2 && t[1] == "0") {
                f.zero = f.dead = true;
            } else if (k < t.size() && t[k] == "defined") {
                const bool paren = k + 1 < t.size() && t[k + 1] == "(";
                k += paren ? 2 : 1;
                if (k < t.size() && k + (paren ? 2 : 1) == t.size()) {
                    f.name = t[k];
                    f.guards = negated;
                }
            }
            frames.push_back(std::move(f));
        } else if (d.starts_with("elif") && !frames.empty()) {
            frames.back() = Frame{};
        } else if (d == "else" && !frames.empty()) {
            frames.back().guards = !frames.back().guards;
            frames.back().dead = false;
        } else if (d == "endif" && !frames.empty()) {
            frames.pop_back();
        } else if (d == "define" && t.size() > 1 &&
                   std::ranges::none_of(frames, [&](const Frame& f) {
                       return f.dead || (f.guards && f.name == t[1]);
                   })) {
            out.emplace(t[1], start);
        }
    }
    return out;
}

std::string redefined_reason(std::string_view name, const std::string& at) {
    const std::string n(name);
    return "is #defined again at " + at + ", outside an #ifndef " + n +
           " guard: that value replaces the injected one (NVRTC only warns); put the file's "
           "default under #ifndef " +
           n;
}

std::string unread_reason(const UnreadDefine& u, const std::string& readers) {
    return u.redefined_at.empty() ? "is never read by " + readers + did_you_mean(u.nearest)
                                  : redefined_reason(u.name, u.redefined_at);
}

bool names_identifier(std::string_view text, std::string_view word) {
    std::set<std::string_view> names, macros;
    scan(text, names, macros);
    return names.contains(word);
}

std::vector<UnreadDefine> unread_defines(const SourceSet& sources, const SourceFile& kernel,
                                         const std::map<std::string, std::string>& defines) {
    std::vector<UnreadDefine> out;
    if (defines.empty())
        return out;
    std::set<std::string_view> names, macros;
    std::vector<const SourceFile*> files = {&kernel};
    for (const SourceFile* f : sources.includable(kernel))
        if (f != &kernel)
            files.push_back(f);
    std::vector<std::map<std::string, int, std::less<>>> unguarded;
    for (const SourceFile* f : files) {
        scan(f->text, names, macros);
        unguarded.push_back(unguarded_defines(f->text));
    }
    for (const auto& [name, value] : defines) {
        if (names.contains(name)) {
            for (std::size_t i = 0; i < files.size(); ++i)
                if (const auto at = unguarded[i].find(name); at != unguarded[i].end()) {
                    out.push_back({name, {}, files[i]->path + ":" + std::to_string(at->second)});
                    break;
                }
            continue;
        }
        std::vector<std::string> candidates;
        for (const std::string_view m : macros)
            if (m != "define" && m != "ifndef" && m != "ifdef" && m != "if" && m != "endif" &&
                m != "defined" && m != "include" && m != "pragma" && m != "else" &&
                m != "elif" && m != "undef")
                candidates.emplace_back(m);
        out.push_back({name, nearest(name, candidates), {}});
    }
    return out;
}

std::vector<Diagnostic> unread_define_diagnostics(const SourceSet& sources,
                                                  const SourceFile& kernel, const std::string& label,
                                                  const std::map<std::string, SourceLocation>& places,
                                                  const std::map<std::string, std::string>& defines,
                                                  Severity severity) {
    std::vector<Diagnostic> out;
    for (const UnreadDefine& u : unread_defines(sources, kernel, defines)) {
        Diagnostic d;
        if (const auto at = places.find(u.name); at != places.end()) {
            d.path = at->second.path;
            d.line = at->second.line;
            d.column = at->second.column;
        }
        d.severity = severity;
        d.message = "kernel '" + label + "': define " + u.name + " " +
                    unread_reason(u, kernel.path + " or the files it includes");
        out.push_back(std::move(d));
    }
    return out;
}

std::map<std::string, SourceLocation> define_places(const KernelSpec& spec) {
    std::map<std::string, SourceLocation> places;
    for (const auto& [name, at] : spec.define_sources)
        places[name] = at.name;
    return places;
}

void refuse_unread_diagnostics(const std::vector<Diagnostic>& found, bool allow) {
    if (found.empty())
        return;
    if (!allow) {
        const Diagnostic& d = found.front();
        throw ConfigError(d.message, d.path, d.line, d.column);
    }
    for (Diagnostic d : found) {
        d.severity = Severity::warning;
        warn(d);
    }
}

void refuse_unread_define(const UnreadDefine& unread, const std::string& what,
                          const std::string& readers) {
    const std::string message =
        "define " + unread.name + " (" + what + ") " + unread_reason(unread, readers);
    if (!process_flags().get_bool(kFlagAllowUnreadDefines))
        throw ConfigError(unread.redefined_at.empty()
                              ? message + " (" + std::string(kFlagAllowUnreadDefines) +
                                    "=1 lets through a define that only a toolkit header reads)"
                              : message);
    warn(message);
}

void require_defines_read(const SourceSet& sources, const SourceFile& kernel,
                          const std::map<std::string, std::string>& defines,
                          const std::string& what) {
    for (const UnreadDefine& u : unread_defines(sources, kernel, defines))
        refuse_unread_define(u, what, kernel.path + " or the files it includes");
}

} // namespace kjit
