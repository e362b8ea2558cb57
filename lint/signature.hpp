#pragma once
// `kjit sig`: each `__global__` entry point of a kernel tree with its parameters' types, sizes
// and offsets and its launch bounds, exact or an error at the location that keeps it from
// being exact (never a guessed size).

#include "core/diagnostic.hpp"
#include "jit/sources.hpp"
#include "lint/libclang.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kjit::lint {

/// One `__launch_bounds__` argument as written (macros expanded when the attribute itself is
/// spelled through a macro) and its value when it is a constant.
struct LaunchBound {
    std::string text;
    std::optional<long long> value;
};

/// One kernel as `kjit sig` lists it.
struct KernelSignature {
    EntryPoint entry;
    std::string path; ///< the file it is defined in, as diagnostics print it
    std::string unit; ///< the set name of the file whose parse listed it (what --verify compiles)
    std::vector<long long> offsets; ///< per parameter, in the argument buffer; -1 when unknown
    long long bytes = -1;           ///< the end of the last parameter; -1 when unknown
    std::vector<LaunchBound> launch_bounds;
    /// Errors (a parameter whose size is not known, an instantiation that names no kernel) and
    /// notes (a template listed without instantiation), at their locations, in the order shown.
    std::vector<Diagnostic> diagnostics;
};

/// What `kjit sig` lists.
struct SignatureRequest {
    const SourceSet* sources = nullptr;
    std::vector<std::string> targets; ///< set names; empty: every kernel and header
    const Libclang* clang = nullptr;
    ParseOptions options; ///< defines, include directories, instantiations
};

/// The kernels, each listed once (across the `.cu` files that include its header, and for a
/// declaration and its definition), in the order the files were parsed; notes on what could
/// not be parsed.
struct SignatureReport {
    std::vector<KernelSignature> kernels;
    std::vector<std::string> notes;
    /// The set names of the `.cu` files parsed (each a translation unit of its own).
    std::vector<std::string> units;
    /// Whether any kernel has an error diagnostic.
    [[nodiscard]] bool has_errors() const;
};

/// Parses the request's `.cu` files, and each header with a `__global__` that none of them
/// includes, in parallel.
SignatureReport signatures(const SignatureRequest& request);

/// The argument-buffer offset of each parameter (each aligned to its own alignment, as
/// cuFuncGetParamInfo reports them); -1 from the first parameter whose layout is not known.
std::vector<long long> param_offsets(const std::vector<KernelParam>& params);

/// `kjit sig`'s listing: per kernel a header line, a parameter table and its diagnostics
/// (compiler format), then `sig: N entry point(s), E error(s)`; or, with `json`, the same
/// content (the same messages, null where the text shows `?`) as a JSON array.
std::string format_signatures(const SignatureReport& report, bool json);

} // namespace kjit::lint
