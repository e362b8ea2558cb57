#pragma once

#include "jit/compile_options.hpp"
#include "jit/error.hpp"
#include "jit/kernel_params.hpp"
#include "jit/sources.hpp"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// The output of one successful NVRTC compile.
struct CompiledKernel {
    std::string kernel;       ///< "rms_norm"
    std::string path;         ///< "kernel_src/rms_norm.cu"
    Hash128 source_hash;
    CompileOptions options;
    std::string cubin;        ///< machine code for options.arch; empty when options.check_only
    std::string ptx;          ///< only when options.ptx
    std::string log;          ///< warnings, locations rewritten to repo paths
    double compile_ms = 0;
    /// Every entry point and its parameter types, read from the PTX of this compile.
    std::vector<EntryParams> entries;
    /// Each of options.name_expressions and its lowered name: "scale<128, float>" ->
    /// "_Z5scaleILi128EfEvPT0_S0_i".
    std::map<std::string, std::string> lowered_names;

    /// The parameters of entry point `name` (an exported name or a name expression), or
    /// nullptr when the kernel has no such entry.
    [[nodiscard]] const EntryParams* entry(std::string_view name) const;
};

/// NVRTC's version as major*1000 + minor*10 (13.0 -> 13000), like CUDA_VERSION.
int nvrtc_version();

/// The real architectures this NVRTC compiles for, oldest first: "sm_75", ..., "sm_120".
std::vector<std::string> supported_archs();

/// CompileOptions::check(), and an arch this NVRTC compiles for (sm_NNa and sm_NNf when it
/// compiles sm_NN); ConfigError `unknown architecture 'sm_999' (NVRTC 13.0 compiles for: ...)`.
void check_options(const CompileOptions& options);

/// Compiles one kernel of `sources`, offering the files it can include (SourceSet::includable)
/// in memory and no directory of the kernel tree: the compile reads only what the cache key
/// covers (the directories of options.include_dirs and toolkit_include_dirs aside).
/// Throws ConfigError for options check_options() refuses, CompileError (with the log at the
/// kernel's own file:line) when the source is bad; never returns an empty CUBIN (but for
/// options.check_only, which asks for none).
CompiledKernel compile(const SourceSet& sources, std::string_view kernel,
                       const CompileOptions& options);

/// A compile that failed because a name expression names nothing: NVRTC reports it in the name
/// map it builds from them (`__nv_name_map:2:31: error: namespace "blas" has no member
/// "axpi"`), a place in no file.
struct NameMapError {
    std::string expression; ///< the first of the expressions given that the log names
    std::string nvrtc;      ///< NVRTC's first name-map line
};

/// The NameMapError of a failed compile's `log` among `expressions`, else nullopt.
std::optional<NameMapError> name_map_error(const std::string& log,
                                           std::span<const std::string> expressions);

/// NVRTC's log of `kernel` compiled as compile() would, with `appended` after its text, by the
/// front end alone (-fdevice-syntax-only: nothing generated, tens of milliseconds): a question
/// about what the source declares, asked in C++ (a static_assert, a type shown in an error).
/// "" when it compiles.
std::string front_end_log(const SourceSet& sources, std::string_view kernel,
                          const CompileOptions& options, std::string_view appended);

/// Rewrites NVRTC's `name(line): error: msg` lines to `path:line:col: error: msg`, mapping
/// header include names to their paths, and collects them as diagnostics (NVRTC's remarks as
/// notes, its catastrophic errors as errors).
std::string rewrite_log(const std::string& log, const SourceSet& sources,
                        std::vector<Diagnostic>* diagnostics);

} // namespace kjit
