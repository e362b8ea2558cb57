#include "lint/rules_text.hpp"

#include "lint/scanner.hpp"

#include <algorithm>
#include <filesystem>
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
                     std::vector<Diagnostic>& out) {
    auto add = [&](int line, int column, std::string message) {
        out.push_back({file.path, line, column, Severity::error, std::move(message), "KJ005"});
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

} // namespace

std::vector<Diagnostic> lint_text(const SourceFile& file, const SourceSet& sources) {
    const ScannedSource scanned = scan(file.text);
    std::vector<Diagnostic> out;
    lint_continuations(file, scanned, out);
    lint_directives(file, scanned, sources, out);
    return out;
}

} // namespace kjit::lint
