#pragma once
// The one encoding of a compile's result: `key=value` lines, each value on one line (`\` and
// newlines escaped). A disk-cache entry stores a compiled kernel's record as its meta; a compile
// worker replies with the same record, or with a failed compile's.

#include "jit/compiler.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// `\` as `\\` and a newline as `\n`, so that the value fits on one line.
std::string escape_meta(std::string_view value);
/// The inverse of escape_meta().
std::string unescape_meta(std::string_view escaped);
/// Every value of `name` in `meta`, unescaped, in order (a key may repeat).
std::vector<std::string> meta_values(std::string_view meta, std::string_view name);

/// A compiled kernel's record: kernel, path, arch, defines, source_hash, nvrtc, compile_ms, log,
/// each entry point's parameter types, each name expression's lowered name (the machine code
/// travels beside it).
std::string kernel_meta(const CompiledKernel& kernel);
/// The kernel a record describes, with its machine code and PTX; `options` are the request's
/// (the record shows them to people, it does not restore them).
CompiledKernel kernel_from_meta(std::string_view meta, std::string cubin, std::string ptx,
                                const CompileOptions& options);

/// A failed compile's record: kernel, path, each option, each define, source_hash, each
/// diagnostic, log.
std::string compile_error_meta(const CompileError& error);
/// The CompileError a record describes.
CompileError compile_error_from_meta(std::string_view meta);

} // namespace kjit
