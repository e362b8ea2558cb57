#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// What one source's #include directives can name. NVRTC resolves an in-memory header by the
/// exact spelling of its #include (no search relative to the including file), so these names
/// are looked up as they are written.
struct IncludeScan {
    /// Every name an `#include`, `#include_next` or `__has_include` spells as "..." or <...>.
    std::vector<std::string> names;
    /// An #include (or __has_include) whose operand is a macro: it may name any file.
    bool computed = false;
};

/// Scans `text` for the names it can include. The scan is textual on purpose (the names decide
/// what a cache key covers, so a misread may only add one): conditionals are not evaluated and
/// commented-out directives count, so it names a superset of what any define set reaches
/// (never less; line splices, `%:` and comments between `#` and `include` are handled). The
/// define checks read the lexed lines of jit/source_lines.hpp instead.
IncludeScan scan_includes(std::string_view text);

/// True for a conventional header name: .h .hh .hpp .hxx .cuh .inc .inl .ipp .tcc .def.
bool has_header_extension(std::string_view name);

} // namespace kjit
