#include "jit/define_use.hpp"

#include "core/error.hpp"
#include "core/flags.hpp"
#include "core/names.hpp"
#include "core/warnings.hpp"

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

} // namespace

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
    scan(kernel.text, names, macros);
    for (const SourceFile* f : sources.includable(kernel))
        if (f != &kernel)
            scan(f->text, names, macros);
    for (const auto& [name, value] : defines) {
        if (names.contains(name))
            continue;
        std::vector<std::string> candidates;
        for (const std::string_view m : macros)
            if (m != "define" && m != "ifndef" && m != "ifdef" && m != "if" && m != "endif" &&
                m != "defined" && m != "include" && m != "pragma" && m != "else" &&
                m != "elif" && m != "undef")
                candidates.emplace_back(m);
        out.push_back({name, nearest(name, candidates)});
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
        d.message = "kernel '" + label + "': define " + u.name + " is never read by " +
                    kernel.path + " or the files it includes" + did_you_mean(u.nearest);
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
    const std::string message = "define " + unread.name + " (" + what + ") is never read by " +
                                readers + did_you_mean(unread.nearest);
    if (!process_flags().get_bool(kFlagAllowUnreadDefines))
        throw ConfigError(message + " (" + std::string(kFlagAllowUnreadDefines) +
                          "=1 lets through a define that only a toolkit header reads)");
    warn(message);
}

void require_defines_read(const SourceSet& sources, const SourceFile& kernel,
                          const std::map<std::string, std::string>& defines,
                          const std::string& what) {
    for (const UnreadDefine& u : unread_defines(sources, kernel, defines))
        refuse_unread_define(u, what, kernel.path + " or the files it includes");
}

} // namespace kjit
