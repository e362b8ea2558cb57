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
/// open around each line, what is known to be defined (the injected defines and NVRTC's own
/// macros, less those #undef'd).
class RedefinitionWalk {
  public:
    RedefinitionWalk(const SourceSet& sources, const std::map<std::string, std::string>& defines)
        : sources_(sources) {
        for (const auto& [name, value] : defines) {
            injected_.insert(name);
            defined_.insert(name);
        }
        for (const char* name : {"__CUDACC__", "__CUDACC_RTC__", "__CUDA_ARCH__"})
            defined_.insert(name);
    }

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
    enum class Truth { unknown, yes, no };

    // An open conditional: the names its #if and #elif lines have tested so far, whether the
    // branch being read is taken (yes), skipped (no) or cannot be told; whether an earlier
    // branch was taken, or could not be told.
    struct Frame {
        std::set<std::string, std::less<>> tested;
        Truth branch = Truth::unknown;
        bool taken = false, unsure = false;
    };

    Truth defined(std::string_view name) const {
        if (defined_.contains(name))
            return Truth::yes;
        return undone_.contains(name) ? Truth::no : Truth::unknown;
    }

    static Truth negate(Truth t) {
        return t == Truth::unknown ? t : t == Truth::yes ? Truth::no : Truth::yes;
    }

    // The condition of directive `t` when it is one kjit can tell: `#ifdef N`, `#ifndef N`,
    // `#if [!]defined[(]N[)]` over what is known defined, `#if 0`, `#if (1)`, `#if false`.
    Truth condition(const std::vector<std::string>& t) const {
        const std::string& d = t[0];
        if (d == "ifdef" || d == "elifdef" || d == "ifndef" || d == "elifndef") {
            const Truth known = t.size() == 2 ? defined(t[1]) : Truth::unknown;
            return d.ends_with("ndef") ? negate(known) : known;
        }
        std::vector<std::string_view> words;
        for (std::size_t k = 1; k < t.size(); ++k)
            if (t[k] != "(" && t[k] != ")")
                words.push_back(t[k]);
        if (words.size() == 1 && (words[0] == "0" || words[0] == "false"))
            return Truth::no;
        if (words.size() == 1 && (words[0] == "1" || words[0] == "true"))
            return Truth::yes;
        const bool negated = !words.empty() && words[0] == "!";
        const std::size_t k = negated ? 1 : 0;
        if (words.size() == k + 2 && words[k] == "defined")
            return negated ? negate(defined(words[k + 1])) : defined(words[k + 1]);
        return Truth::unknown;
    }

    bool dead() const {
        return std::ranges::any_of(frames_, [](const Frame& f) { return f.branch == Truth::no; });
    }

    // Whether an open conditional that kjit cannot tell tests `name`: its author handles an
    // injected value there (`#if !defined(X) || X == 0`).
    bool handled(std::string_view name) const {
        return std::ranges::any_of(frames_, [&](const Frame& f) {
            return f.branch == Truth::unknown && f.tested.contains(name);
        });
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
        if (d == "if" || d == "ifdef" || d == "ifndef") {
            Frame frame;
            frame.branch = condition(t);
            frame.taken = frame.branch == Truth::yes;
            frame.unsure = frame.branch == Truth::unknown;
            test(frame);
            frames_.push_back(std::move(frame));
            return;
        }
        if (d.starts_with("elif") || d == "else") {
            if (frames_.empty())
                return;
            Frame& frame = frames_.back();
            const Truth c = d == "else" ? Truth::yes : condition(t);
            frame.branch = frame.taken || c == Truth::no ? Truth::no
                           : frame.unsure                ? Truth::unknown
                                                         : c;
            frame.taken = frame.taken || frame.branch == Truth::yes;
            frame.unsure = frame.unsure || frame.branch == Truth::unknown;
            test(frame);
            return;
        }
        if (d == "endif") {
            if (!frames_.empty())
                frames_.pop_back();
            return;
        }
        if (t.size() < 2 || dead())
            return;
        if (d == "include" || d == "include_next") {
            const std::size_t open = text.find_first_of("\"<");
            const std::size_t close = open == std::string_view::npos
                                          ? open
                                          : text.find(text[open] == '"' ? '"' : '>', open + 1);
            if (close != std::string_view::npos)
                if (const SourceFile* g = sources_.find(text.substr(open + 1, close - open - 1)))
                    file(*g);
        } else if (d == "undef" && !handled(t[1])) {
            undone_.insert_or_assign(t[1], std::pair{&f, line});
            defined_.erase(t[1]);
        } else if (d == "define") {
            const auto undone = undone_.find(t[1]);
            if (injected_.contains(t[1]) && (undone != undone_.end() || !handled(t[1]))) {
                Redefinition r{&f, line, nullptr, 0};
                if (undone != undone_.end())
                    std::tie(r.undef_file, r.undef_line) = undone->second;
                out.emplace(t[1], r);
            }
            if (std::ranges::none_of(frames_,
                                     [](const Frame& fr) { return fr.branch == Truth::unknown; }))
                defined_.insert(t[1]);
        }
    }

    const SourceSet& sources_;
    std::set<const SourceFile*> visited_;
    std::vector<Frame> frames_;
    std::set<std::string, std::less<>> injected_, defined_;
    /// #undef'd: where.
    std::map<std::string, std::pair<const SourceFile*, int>, std::less<>> undone_;
};

} // namespace

std::map<std::string, Redefinition, std::less<>>
replaced_defines(const SourceSet& sources, const SourceFile& kernel,
                 const std::map<std::string, std::string>& defines) {
    RedefinitionWalk walk(sources, defines);
    walk.file(kernel);
    return std::move(walk.out);
}

std::string redefined_reason(std::string_view name, const Redefinition& r, bool by_path) {
    const auto where = [&](const SourceFile* f, int line) {
        return (by_path ? f->path : f->name) + ":" + std::to_string(line);
    };
    const std::string n(name), at = where(r.file, r.line);
    return (r.undef_line
                ? "is #undef'd at " + where(r.undef_file, r.undef_line) +
                      " and #defined again at " + at
                : "is #defined again at " + at + " with no #if that tests " + n + " around it") +
           ": the file's value replaces the injected one (NVRTC keeps it and warns at most); "
           "put the file's default under #ifndef " +
           n;
}

std::string unread_reason(const UnreadDefine& u, const std::string& readers) {
    return u.redefined ? redefined_reason(u.name, *u.redefined, true)
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
    const auto replaced = replaced_defines(sources, kernel, defines);
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
