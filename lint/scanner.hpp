#pragma once
// The preprocessor's view of a kernel source, as the lint rules need it: directives with their
// tokens at physical positions, and where the comments are.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::lint {

/// A preprocessing token and where it starts (1-based line, 1-based byte column).
struct PpToken {
    std::string text;
    int line = 0;
    int column = 0;
    bool spaced = false; ///< whitespace or a comment comes right before it
};

/// `#name args...`: one directive over one logical line.
struct Directive {
    std::string name; ///< "define", "if", ...; empty for a null directive
    int line = 0;     ///< of the '#'
    int column = 0;
    int end_line = 0; ///< the physical line its newline is on
    /// Open braces of the code around it, namespace and `extern "C"` blocks not counted: more
    /// than 0 inside a function or class body.
    int scope = 0;
    /// Outside any function or class body, inside a namespace or `extern "C"` block: the
    /// indentation of that block's code, before the directive and after it (the least column
    /// before a token that starts a line directly in the block); -1 at file scope or where the
    /// block has no such line. The lines right after a #define body that may have lost its last
    /// continuation (several lines, or a function-like macro's empty body) do not count, up to
    /// a blank line, a comment, a directive, the '}' that closes the #define's block or a block
    /// that opens: a lost '\\' would make them the body's.
    int block_indent = -1;
    std::vector<PpToken> args;
};

/// The directives of a source and the byte ranges of its comments.
struct ScannedSource {
    std::vector<Directive> directives;
    std::vector<std::pair<std::size_t, std::size_t>> comments; ///< [begin, end), in order
    bool bom = false; ///< the text starts with a UTF-8 byte-order mark (read as whitespace)
};

/// Lexes `text` as the preprocessor does (splices joined, comments skipped, raw string literals
/// read whole); takes any bytes. Columns count bytes, a leading byte-order mark included.
ScannedSource scan(std::string_view text);

/// Whether the line after #define `d` may be part of its body that lost its last '\\': a body
/// over several lines, or a function-like macro's empty one (its first '\\' lost). The
/// continuation check (KJ001) questions that line; the block indentation leaves it out.
bool questioned(const Directive& d);

/// The preprocessing tokens of `text` (a define's value).
std::vector<std::string> tokenize(std::string_view text);

/// Whether the token `s` is an identifier (starts with a letter, '_' or '$').
bool is_identifier(std::string_view s);

/// Whether `s` is a name the implementation owns (`__CUDA_ARCH__`, `_MSC_VER`): never a kernel
/// author's knob.
bool is_reserved(std::string_view s);

/// Whether directive `name` opens a conditional: if, ifdef, ifndef.
bool is_conditional_start(std::string_view name);

/// Whether directive `name` continues a conditional: elif, elifdef, elifndef, else.
bool is_conditional_else(std::string_view name);

} // namespace kjit::lint
