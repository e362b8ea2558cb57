#pragma once
// A CUDA source's text as the preprocessor first sees it, for jit's text-level checks: lines
// joined over backslash-newlines (translation phase 2), comments gone (phase 3), literals kept
// whole (raw strings over several lines and digit separators included), each line's tokens. No
// macro is expanded and no conditional evaluated.

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// `text` with every backslash-newline (and backslash-CR-LF) removed; with `splices`, the offset
/// in the result where each one was.
std::string splice_lines(std::string_view text, std::vector<std::size_t>* splices = nullptr);

/// A preprocessing token (punctuators one character each).
struct Token {
    enum class Kind { identifier, number, literal, punctuator };
    Kind kind;
    std::string_view text;
};

/// One logical line: its physical lines joined over backslash-newlines and over the comments and
/// raw strings that span lines; each comment is one space, literals are as written.
struct LogicalLine {
    int line = 1;                  ///< the physical line of its first token (from 1)
    std::string_view text;         ///< without its final newline
    std::span<const Token> tokens; ///< its tokens, in order
    /// A directive (`#` or `%:` first): the tokens after that; else empty.
    std::span<const Token> directive;
    bool is_directive = false;
};

/// The logical lines of a source text, in order, lexed once (the views stay valid as long as
/// the object, which is why it is neither copied nor moved).
class LogicalSource {
  public:
    explicit LogicalSource(std::string_view text);
    LogicalSource(const LogicalSource&) = delete;
    LogicalSource& operator=(const LogicalSource&) = delete;

    const std::vector<LogicalLine>& lines() const { return lines_; }

  private:
    std::string text_;
    std::vector<Token> tokens_;
    std::vector<LogicalLine> lines_;
};

/// The header an #include's operand spells, "name" or <name>, at the start of `operand` (blanks
/// before it skipped); nullopt for anything else (a macro, a cut name).
std::optional<std::string_view> header_name(std::string_view operand);

} // namespace kjit
