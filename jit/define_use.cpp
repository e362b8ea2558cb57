#include "jit/define_use.hpp"

#include "core/error.hpp"
#include "core/flags.hpp"
#include "core/names.hpp"
#include "core/warnings.hpp"

#include <algorithm>
#include <cctype>
#include <ranges>
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
            // A line comment goes on over a backslash-newline.
            std::size_t end = line ? out.find('\n', i) : out.find("*/", i + 2);
            while (
                line && end != std::string::npos && end > 0 &&
                (out[end - 1] == '\\' || (out[end - 1] == '\r' && end > 1 && out[end - 2] == '\\')))
                end = out.find('\n', end + 1);
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

namespace {

/// The walk of replaced_defines: the files of one compile in include order, the conditionals
/// open around each line.
class RedefinitionWalk {
  public:
    explicit RedefinitionWalk(const SourceSet& sources) : sources_(sources) {}

    void file(const SourceFile& f) {
        if (!visited_.insert(&f).second)
            return;
        const std::string clean = without_comments(f.text);
        int line = 1;
        for (std::size_t i = 0; i < clean.size();) {
            // One logical line: backslash-newlines (and backslash-CR-LF) joined.
            const int start = line;
            std::size_t end = i;
            for (; end < clean.size(); ++end) {
                if (clean[end] != '\n')
                    continue;
                ++line;
                const std::size_t before = end > 0 && clean[end - 1] == '\r' ? end - 1 : end;
                if (before == 0 || clean[before - 1] != '\\')
                    break;
            }
            const std::string_view logical = std::string_view(clean).substr(i, end - i);
            i = end + 1;
            const std::size_t hash = logical.find_first_not_of(" \t\r\f\v");
            if (hash != std::string_view::npos && logical[hash] == '#')
                directive(f, start, logical.substr(hash + 1));
        }
    }

    std::map<std::string, Redefinition, std::less<>> out;

  private:
    // An open conditional: the names its #if and #elif lines have tested so far; `dead` in a
    // branch of `#if 0` or `#elif 0`.
    struct Frame {
        std::set<std::string, std::less<>> tested;
        bool dead = false;
    };

    bool tested(std::string_view name) const {
        return std::ranges::any_of(frames_,
                                   [&](const Frame& f) { return f.tested.contains(name); });
    }

    void directive(const SourceFile& f, int line, std::string_view text) {
        const std::vector<std::string> t = directive_tokens(text);
        if (t.empty())
            return;
        const std::string& d = t[0];
        auto test = [&](Frame& frame) {
            for (std::size_t k = 1; k < t.size(); ++k)
                if (ident_start(t[k][0]))
                    frame.tested.insert(t[k]);
        };
        // `#if 0`, `#if (0)`, `#if false`.
        const bool never =
            std::ranges::count_if(
                t, [](const std::string& w) { return w == "0" || w == "false"; }) == 1 &&
            std::ranges::all_of(t | std::views::drop(1), [](const std::string& w) {
                return w == "0" || w == "false" || w == "(" || w == ")";
            });
        if (d == "if" || d == "ifdef" || d == "ifndef") {
            Frame frame;
            frame.dead = d == "if" && never;
            test(frame);
            frames_.push_back(std::move(frame));
            return;
        }
        if (d.starts_with("elif") || d == "else") {
            if (!frames_.empty()) {
                frames_.back().dead = d == "elif" && never;
                test(frames_.back());
            }
            return;
        }
        if (d == "endif") {
            if (!frames_.empty())
                frames_.pop_back();
            return;
        }
        if (t.size() < 2 || std::ranges::any_of(frames_, [](const Frame& f) { return f.dead; }))
            return;
        if (d == "include" || d == "include_next") {
            const std::size_t open = text.find_first_of("\"<");
            const std::size_t close = open == std::string_view::npos
                                          ? open
                                          : text.find(text[open] == '"' ? '"' : '>', open + 1);
            if (close != std::string_view::npos)
                if (const SourceFile* g = sources_.find(text.substr(open + 1, close - open - 1)))
                    file(*g);
        } else if (d == "undef" && !tested(t[1])) {
            undone_.emplace(t[1], line);
        } else if (d == "define") {
            const auto undone = undone_.find(t[1]);
            if (undone != undone_.end() || !tested(t[1]))
                out.emplace(t[1],
                            Redefinition{&f, line, undone == undone_.end() ? 0 : undone->second});
        }
    }

    const SourceSet& sources_;
    std::set<const SourceFile*> visited_;
    std::vector<Frame> frames_;
    std::map<std::string, int, std::less<>> undone_; ///< #undef'd outside a test: its line
};

} // namespace

std::map<std::string, Redefinition, std::less<>> replaced_defines(const SourceSet& sources,
                                                                  const SourceFile& kernel) {
    RedefinitionWalk walk(sources);
    walk.file(kernel);
    return std::move(walk.out);
}

std::string redefined_reason(std::string_view name, const Redefinition& r,
                             const std::string& file) {
    const std::string n(name), at = file + ":" + std::to_string(r.line);
    return (r.undef_line
                ? "is #undef'd at " + file + ":" + std::to_string(r.undef_line) +
                      " and #defined again at " + at
                : "is #defined again at " + at + " with no #if that tests " + n + " around it") +
           ": the file's value replaces the injected one (NVRTC keeps it and warns at most); "
           "put the file's default under #ifndef " +
           n;
}

std::string unread_reason(const UnreadDefine& u, const std::string& readers) {
    return u.redefined ? redefined_reason(u.name, *u.redefined, u.redefined->file->path)
                       : "is never read by " + readers + did_you_mean(u.nearest);
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
    for (const SourceFile* f : files)
        scan(f->text, names, macros);
    const auto replaced = replaced_defines(sources, kernel);
    for (const auto& [name, value] : defines) {
        if (names.contains(name)) {
            if (const auto r = replaced.find(name); r != replaced.end())
                out.push_back({name, {}, r->second});
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
        throw ConfigError(!unread.redefined
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
