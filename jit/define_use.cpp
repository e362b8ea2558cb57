#include "jit/define_use.hpp"

#include "core/error.hpp"
#include "core/flags.hpp"
#include "core/names.hpp"
#include "core/warnings.hpp"
#include "jit/source_lines.hpp"

#include <algorithm>
#include <memory>
#include <ranges>
#include <set>
#include <span>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace kjit {

namespace {

using Names = std::set<std::string, std::less<>>;

/// The logical lines of each file read, lexed once however many scans read it.
class Lines {
  public:
    const std::vector<LogicalLine>& of(const SourceFile& f) {
        return lines_.try_emplace(&f, f.text).first->second.lines();
    }

  private:
    std::map<const SourceFile*, LogicalSource> lines_;
};

/// The identifiers a scan found, as views into the lines it read.
using Words = std::unordered_set<std::string_view>;

/// The parameters of a function-like `#define NAME(a, b) ...` (`directive`: the tokens after
/// the `#`; the `(` touching the name), else none. In its body they are the arguments, not the
/// macros of that name: `#define SCALE(SPLIT_K) ((SPLIT_K) * 2)` reads no define SPLIT_K.
std::unordered_set<std::string_view> macro_parameters(std::span<const Token> directive) {
    std::unordered_set<std::string_view> params;
    if (directive.size() < 3 || directive[0].text != "define" || directive[2].text != "(" ||
        directive[2].text.data() != directive[1].text.data() + directive[1].text.size())
        return params;
    for (std::size_t k = 3; k < directive.size() && directive[k].text != ")"; ++k)
        if (directive[k].kind == Token::Kind::identifier)
            params.insert(directive[k].text);
    return params;
}

/// Calls `f` with each identifier of `tokens` (a line's, or a directive's after the `#`) that
/// names something outside it: all but a function-like macro's parameters.
template <class F>
void for_each_name(std::span<const Token> tokens, std::span<const Token> directive, F&& f) {
    const auto params = macro_parameters(directive);
    for (const Token& t : tokens)
        if (t.kind == Token::Kind::identifier && !params.contains(t.text))
            f(t.text);
}

/// Adds the identifiers of `lines` (outside comments, string and character literals; not a
/// function-like macro's parameters) to `names`, and those on preprocessor lines to `macros`
/// too.
void scan(const std::vector<LogicalLine>& lines, Words& names, std::set<std::string_view>& macros) {
    for (const LogicalLine& l : lines)
        for_each_name(l.tokens, l.directive, [&](std::string_view name) {
            names.insert(name);
            if (l.is_directive)
                macros.insert(name);
        });
}

/// The walk of replaced_defines: the files of one compile in include order, the conditionals
/// open around each line, what is known to be defined (the injected defines and NVRTC's own
/// macros, less those #undef'd). With `live`, the identifiers of every line a compile can read
/// (not in a branch known to be skipped, `#if 0` and the like) are added to it, but for a
/// `#define`'s body (expand() adds it where a read names the macro) and an injected define's
/// own `#ifndef` default.
class RedefinitionWalk {
  public:
    RedefinitionWalk(const SourceSet& sources, Lines& lines,
                     const std::map<std::string, std::string>& defines, Words* live = nullptr)
        : sources_(sources), lines_(lines), live_(live) {
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
        for (const LogicalLine& l : lines_.of(f)) {
            if (l.is_directive)
                directive(f, l);
            else if (!dead())
                read(l.tokens);
        }
    }

    [[nodiscard]] bool visited(const SourceFile& f) const { return visited_.contains(&f); }

    /// Adds to `names` what the bodies of the macros it names read, transitively: a define read
    /// only in the body of a macro nothing expands is no read.
    void expand(Words& names) const {
        std::vector<std::string_view> todo(names.begin(), names.end());
        bool pasted = false;
        while (!todo.empty()) {
            const std::string_view macro = todo.back();
            todo.pop_back();
            // A macro that pastes may expand to any macro: every body counts, as before.
            if (!pasted && pastes_.contains(macro)) {
                pasted = true;
                for (const auto& [other, _] : bodies_)
                    if (names.insert(other).second)
                        todo.push_back(other);
                todo.push_back(macro);
                continue;
            }
            if (const auto body = bodies_.find(macro); body != bodies_.end())
                for (const std::string_view name : body->second)
                    if (names.insert(name).second)
                        todo.push_back(name);
        }
    }

    /// A macro whose body names `name` (its first in name order), else empty.
    [[nodiscard]] std::string_view body_naming(std::string_view name) const {
        for (const auto& [macro, body] : bodies_)
            if (body.contains(name))
                return macro;
        return {};
    }

    /// Each injected define's first default the walk skipped (`#ifndef N` over `#define N`):
    /// the `#ifndef` line.
    [[nodiscard]] const std::map<std::string, Redefinition, std::less<>>& defaults() const {
        return defaults_;
    }

    /// Each injected define #defined again (the first time), read after it or not.
    [[nodiscard]] const std::map<std::string, Redefinition, std::less<>>& redefinitions() const {
        return redefined_;
    }

    /// The injected defines whose value the compile replaces: each #defined again (the first
    /// time) where a line read after it, or a macro body that may expand anywhere, names it. A
    /// #define after the last read leaves the injected value in every read. `unwalked`: the
    /// names of the files the compile may include that the walk did not follow (a computed
    /// #include), which may be read after it.
    [[nodiscard]] std::map<std::string, Redefinition, std::less<>>
    replaced(const Words& unwalked) const {
        std::map<std::string, Redefinition, std::less<>> out;
        for (const auto& [name, r] : redefined_)
            if (read_after_.contains(name) || in_bodies_.contains(name) || unwalked.contains(name))
                out.emplace(name, r);
        return out;
    }

  private:
    enum class Truth { unknown, yes, no };

    // An open conditional: the names its #if and #elif lines have tested so far, whether the
    // branch being read is taken (yes), skipped (no) or cannot be told; whether an earlier
    // branch was taken, or could not be told.
    struct Frame {
        Names tested;
        Truth branch = Truth::unknown;
        bool taken = false, unsure = false;
        /// `#ifndef N` (or `#if !defined(N)`) of an injected N: the test is a read of N unless
        /// the branch it skips #defines N, the file's default, which the injected value replaces
        /// without ever being read.
        std::string_view guard{};
        bool in_guard = false, guard_defines = false;
        Redefinition guard_at{}; ///< the `#ifndef` line (file, line)
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
    Truth condition(const std::vector<std::string_view>& t) const {
        const std::string_view d = t[0];
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

    // Whether a branch known to be skipped is open (`outer`: leaving out the innermost that many).
    bool dead(std::size_t outer = 0) const {
        const std::size_t n = frames_.size() - std::min(outer, frames_.size());
        return std::any_of(frames_.begin(), frames_.begin() + static_cast<std::ptrdiff_t>(n),
                           [](const Frame& f) { return f.branch == Truth::no; });
    }

    // `tokens` read (a directive's after its name: `directive` holds it whole).
    void read(std::span<const Token> tokens, std::span<const Token> directive = {}) {
        const bool defines = directive.size() >= 2 &&
                             (directive[0].text == "define" || directive[0].text == "undef");
        for_each_name(tokens, directive, [&](std::string_view name) {
            // The name a #define or #undef sets is no read of it; a #define's body is read
            // where the macro expands, which may come after any redefinition.
            if (defines && name.data() == directive[1].text.data())
                return;
            if (defines) {
                // Read where the macro expands: expand() adds it once a read names the macro.
                if (directive[0].text == "define")
                    bodies_[directive[1].text].insert(name);
                in_bodies_.emplace(name);
            } else {
                read_name(name);
            }
        });
    }

    void read_name(std::string_view name) {
        if (live_)
            live_->insert(name);
        if (redefined_.contains(name))
            read_after_.emplace(name);
    }

    // N of `#ifndef N` or `#if !defined(N)`, an injected define the walk knows is defined (the
    // branch is skipped); else empty.
    std::string_view default_guard(const std::vector<std::string_view>& t) const {
        std::vector<std::string_view> words;
        for (std::size_t k = 1; k < t.size(); ++k)
            if (t[k] != "(" && t[k] != ")")
                words.push_back(t[k]);
        const bool guard =
            (t[0] == "ifndef" && words.size() == 1) ||
            (t[0] == "if" && words.size() == 3 && words[0] == "!" && words[1] == "defined");
        if (!guard || !injected_.contains(words.back()) || condition(t) != Truth::no)
            return {};
        return words.back();
    }

    // Whether an open conditional that kjit cannot tell tests `name`: its author handles an
    // injected value there (`#if !defined(X) || X == 0`).
    bool handled(std::string_view name) const {
        return std::ranges::any_of(frames_, [&](const Frame& f) {
            return f.branch == Truth::unknown && f.tested.contains(name);
        });
    }

    void directive(const SourceFile& f, const LogicalLine& l) {
        const std::span<const Token> tokens = l.directive;
        if (tokens.empty())
            return;
        std::vector<std::string_view> t;
        for (const Token& token : tokens)
            t.push_back(token.text);
        const std::string_view d = t[0];
        // What the directive reads: a conditional's names where its enclosing branch is read (an
        // #elif's where the one it continues is), any other directive's where it is read.
        const bool opens = d == "if" || d == "ifdef" || d == "ifndef";
        const bool continues = d.starts_with("elif") || d == "else" || d == "endif";
        const std::string_view guard = opens && !dead() ? default_guard(t) : std::string_view{};
        if (guard.empty() && (opens ? !dead() : continues ? !dead(1) : !dead())) {
            read(tokens.subspan(1), tokens);
            // A body that pastes tokens (`TILE_##T`) names macros no line spells.
            if (d == "define" && t.size() >= 2 && l.text.find("##") != std::string_view::npos)
                pastes_.insert(t[1]);
        }
        auto test = [&](Frame& frame) {
            for (std::size_t k = 1; k < tokens.size(); ++k)
                if (tokens[k].kind == Token::Kind::identifier)
                    frame.tested.emplace(tokens[k].text);
        };
        if (d == "if" || d == "ifdef" || d == "ifndef") {
            Frame frame;
            frame.branch = condition(t);
            frame.taken = frame.branch == Truth::yes;
            frame.unsure = frame.branch == Truth::unknown;
            test(frame);
            frame.guard = guard;
            frame.in_guard = !guard.empty();
            frame.guard_at = {&f, l.line};
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
            frame.in_guard = false;
            test(frame);
            return;
        }
        if (d == "endif") {
            if (frames_.empty())
                return;
            if (const Frame& frame = frames_.back(); frame.guard_defines)
                defaults_.try_emplace(std::string(frame.guard), frame.guard_at);
            else if (!frame.guard.empty())
                read_name(frame.guard);
            frames_.pop_back();
            return;
        }
        if (d == "define" && t.size() >= 2 && !frames_.empty() && frames_.back().in_guard &&
            frames_.back().guard == t[1])
            frames_.back().guard_defines = true;
        if (t.size() < 2 || dead())
            return;
        const std::string name(t[1]);
        if (d == "include" || d == "include_next") {
            const char* operand = d.data() + d.size();
            const auto header = header_name(
                {operand, static_cast<std::size_t>(l.text.data() + l.text.size() - operand)});
            if (const SourceFile* g = header ? sources_.find(*header) : nullptr)
                file(*g);
        } else if (d == "undef" && !handled(name)) {
            undone_.insert_or_assign(name, std::pair{&f, l.line});
            defined_.erase(name);
        } else if (d == "define") {
            const auto undone = undone_.find(name);
            if (injected_.contains(name) && (undone != undone_.end() || !handled(name))) {
                Redefinition r{&f, l.line, nullptr, 0};
                if (undone != undone_.end())
                    std::tie(r.undef_file, r.undef_line) = undone->second;
                redefined_.emplace(name, r);
            }
            if (std::ranges::none_of(frames_,
                                     [](const Frame& fr) { return fr.branch == Truth::unknown; }))
                defined_.insert(name);
        }
    }

    const SourceSet& sources_;
    Lines& lines_;
    Words* live_;
    std::set<const SourceFile*> visited_;
    std::vector<Frame> frames_;
    Names injected_, defined_;
    std::map<std::string, Redefinition, std::less<>> redefined_;
    Names read_after_; ///< redefined names read after their redefinition
    Names in_bodies_;  ///< names a #define's body reads
    /// Each macro the walk saw #defined (in a branch it reads): the names its bodies read.
    std::map<std::string_view, std::set<std::string_view>> bodies_;
    std::set<std::string_view> pastes_; ///< macros whose body has `##`
    std::map<std::string, Redefinition, std::less<>> defaults_;
    /// #undef'd: where.
    std::map<std::string, std::pair<const SourceFile*, int>, std::less<>> undone_;
};

} // namespace

std::map<std::string, Redefinition, std::less<>>
replaced_defines(const SourceSet& sources, const SourceFile& kernel,
                 const std::map<std::string, std::string>& defines) {
    Lines lines;
    RedefinitionWalk walk(sources, lines, defines);
    walk.file(kernel);
    Words unwalked;
    std::set<std::string_view> macros;
    for (const SourceFile* f : sources.includable(kernel))
        if (!walk.visited(*f))
            scan(lines.of(*f), unwalked, macros);
    return walk.replaced(unwalked);
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
    if (u.redefined)
        return redefined_reason(u.name, *u.redefined, true);
    if (u.default_at)
        return "is read by " + readers + " only in its own default, #ifndef " + u.name + " at " +
               u.default_at->file->path + ":" + std::to_string(u.default_at->line) +
               ", which the injected value skips: no line reads the value";
    if (!u.unexpanded_macro.empty())
        return "is read by " + readers + " only in the body of macro " + u.unexpanded_macro +
               ", which nothing they compile expands";
    if (u.only_skipped)
        return "is read by " + readers +
               " only in branches the compile skips (#if 0, #ifndef of a define it injects, "
               "#ifdef of one it #undefs)";
    return "is never read by " + readers + did_you_mean(u.nearest);
}

bool names_identifier(std::string_view text, std::string_view word) {
    const LogicalSource source(text);
    Words names;
    std::set<std::string_view> macros;
    scan(source.lines(), names, macros);
    return names.contains(word);
}

std::vector<UnreadDefine> unread_defines(const SourceSet& sources, const SourceFile& kernel,
                                         const std::map<std::string, std::string>& defines,
                                         std::span<const std::string> expressions) {
    std::vector<UnreadDefine> out;
    if (defines.empty())
        return out;
    // The names read: those of the lines the compile can reach, walking the kernel and the
    // #includes it follows, and every name of the other files it can include (a header found
    // through an include directory, a computed #include: not walked, so read whole).
    Lines lines;
    Words names;
    RedefinitionWalk walk(sources, lines, defines, &names);
    walk.file(kernel);
    const auto includable = sources.includable(kernel);
    std::set<std::string_view> macros; // of every file, for the nearest name; read when needed
    Words unwalked;
    for (const SourceFile* f : includable)
        if (!walk.visited(*f))
            scan(lines.of(*f), unwalked, macros);
    names.insert(unwalked.begin(), unwalked.end());
    // What the compile reads besides the files: the injected values (BLOCK=(WARPS*32) reads
    // WARPS where BLOCK expands) and the name expressions (gemm<TILE_M>), macros expanded.
    std::vector<std::unique_ptr<LogicalSource>> texts;
    for (const auto& [_, value] : defines)
        texts.push_back(std::make_unique<LogicalSource>(value));
    for (const std::string& e : expressions)
        texts.push_back(std::make_unique<LogicalSource>(e));
    for (const auto& t : texts)
        scan(t->lines(), names, macros);
    walk.expand(names);
    Words all;
    bool all_read = false;
    const auto replaced = walk.replaced(unwalked);
    for (const auto& [name, value] : defines) {
        if (names.contains(name)) {
            if (const auto r = replaced.find(name); r != replaced.end())
                out.push_back({name, {}, r->second});
            continue;
        }
        // #defined again and never read: the file's value is the only one the name has.
        if (const auto r = walk.redefinitions().find(name); r != walk.redefinitions().end()) {
            out.push_back({name, {}, r->second});
            continue;
        }
        // Every name and macro of the files it can include, skipped branches too.
        if (!std::exchange(all_read, true)) {
            scan(lines.of(kernel), all, macros);
            for (const SourceFile* f : includable)
                scan(lines.of(*f), all, macros);
        }
        std::vector<std::string> candidates;
        for (const std::string_view m : macros)
            if (m != "define" && m != "ifndef" && m != "ifdef" && m != "if" && m != "endif" &&
                m != "defined" && m != "include" && m != "pragma" && m != "else" &&
                m != "elif" && m != "undef")
                candidates.emplace_back(m);
        UnreadDefine u{name, nearest(name, candidates), {}, all.contains(name)};
        if (const auto d = walk.defaults().find(name); d != walk.defaults().end())
            u.default_at = d->second;
        u.unexpanded_macro = std::string(walk.body_naming(name));
        out.push_back(std::move(u));
    }
    return out;
}

std::vector<Diagnostic>
unread_define_diagnostics(const SourceSet& sources, const SourceFile& kernel,
                          const std::string& label,
                          const std::map<std::string, SourceLocation>& places,
                          const std::map<std::string, std::string>& defines, Severity severity,
                          std::span<const std::string> expressions) {
    std::vector<Diagnostic> out;
    for (const UnreadDefine& u : unread_defines(sources, kernel, defines, expressions)) {
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
        // At the first one's place, naming every other at its own: one run shows them all.
        const Diagnostic& d = found.front();
        std::string message = d.message;
        for (std::size_t i = 1; i < found.size(); ++i)
            message += "\n" + found[i].format();
        throw ConfigError(message + " (" + std::string(kFlagAllowUnreadDefines) + "=1 lets " +
                              (found.size() == 1 ? "it" : "them") +
                              " through: for a define that only a toolkit header reads, or a "
                              "conditional around a #define that kjit cannot read)",
                          d.path, d.line, d.column);
    }
    for (Diagnostic d : found) {
        d.severity = Severity::warning;
        warn(d);
    }
}

void refuse_unread_defines(const std::vector<UnreadDefine>& unread, const std::string& what,
                           const std::string& readers) {
    std::vector<Diagnostic> found;
    for (const UnreadDefine& u : unread)
        found.push_back(
            {.message = "define " + u.name + " (" + what + ") " + unread_reason(u, readers)});
    refuse_unread_diagnostics(found, process_flags().get_bool(kFlagAllowUnreadDefines));
}

void require_defines_read(const SourceSet& sources, const SourceFile& kernel,
                          const std::map<std::string, std::string>& defines,
                          const std::string& what) {
    refuse_unread_defines(unread_defines(sources, kernel, defines), what,
                          kernel.path + " or the files it includes");
}

} // namespace kjit
