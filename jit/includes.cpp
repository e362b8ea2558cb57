#include "jit/includes.hpp"

#include "jit/source_lines.hpp"

#include <cctype>

namespace kjit {

namespace {

bool is_ident(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

class Scanner {
  public:
    explicit Scanner(std::string text) : t_(std::move(text)) {}

    IncludeScan run() {
        for (std::size_t p = 0; p < t_.size(); ++p) {
            const bool hash = t_[p] == '#';
            const bool digraph = t_.compare(p, 2, "%:") == 0;
            if ((hash || digraph) && starts_line(p))
                directive(p + (hash ? 1 : 2));
            else if (t_[p] == '_' && t_.compare(p, 13, "__has_include") == 0 &&
                     (p == 0 || !is_ident(t_[p - 1])))
                has_include(p + 13);
        }
        return std::move(out_);
    }

  private:
    /// Spaces, tabs and /*...*/ comments from p; the first position after them.
    [[nodiscard]] std::size_t skip_space(std::size_t p) const {
        for (;;) {
            while (p < t_.size() && (t_[p] == ' ' || t_[p] == '\t' || t_[p] == '\v' ||
                                     t_[p] == '\f' || t_[p] == '\r'))
                ++p;
            if (t_.compare(p, 2, "/*") != 0)
                return p;
            const std::size_t end = t_.find("*/", p + 2);
            if (end == std::string::npos)
                return t_.size();
            p = end + 2;
        }
    }

    /// Whether a `#` at p begins a directive: only blanks before it on its line, or the end of
    /// a comment (which may have begun on an earlier line: then it counts as a line break).
    [[nodiscard]] bool starts_line(std::size_t p) const {
        while (p > 0) {
            const char c = t_[p - 1];
            if (c == '\n')
                return true;
            if (c == '/' && p >= 2 && t_[p - 2] == '*')
                return true;
            if (c != ' ' && c != '\t' && c != '\v' && c != '\f' && c != '\r')
                return false;
            --p;
        }
        return true;
    }

    [[nodiscard]] std::string word(std::size_t p) const {
        std::size_t e = p;
        while (e < t_.size() && is_ident(t_[e]))
            ++e;
        return t_.substr(p, e - p);
    }

    void directive(std::size_t p) {
        p = skip_space(p);
        const std::string name = word(p);
        if (name == "include" || name == "include_next")
            operand(p + name.size());
    }

    void has_include(std::size_t p) {
        if (t_.compare(p, 5, "_next") == 0)
            p += 5;
        if (p < t_.size() && is_ident(t_[p]))
            return;
        p = skip_space(p);
        if (p < t_.size() && t_[p] == '(')
            operand(p + 1);
    }

    /// A "name" or <name> is recorded; a macro operand means any file.
    void operand(std::size_t p) {
        p = skip_space(p);
        if (p >= t_.size())
            return;
        if (const auto name = header_name(std::string_view(t_).substr(p)))
            out_.names.emplace_back(*name);
        else if (is_ident(t_[p]))
            out_.computed = true;
    }

    std::string t_;
    IncludeScan out_;
};

} // namespace

IncludeScan scan_includes(std::string_view text) {
    return Scanner(splice_lines(text)).run();
}

bool has_header_extension(std::string_view name) {
    const auto dot = name.rfind('.');
    const auto slash = name.rfind('/');
    if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash))
        return false;
    const std::string_view ext = name.substr(dot);
    for (const char* h :
         {".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl", ".ipp", ".tcc", ".def"})
        if (ext == h)
            return true;
    return false;
}

} // namespace kjit
