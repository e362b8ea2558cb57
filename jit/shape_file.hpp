#pragma once

#include "core/diagnostic.hpp"
#include "jit/tuned_table.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kjit {

/// The model shape kernels are specialized for: named integers (`d_model = 7168`).
struct ModelShape {
    std::map<std::string, std::int64_t> values;
};

/// Where a define of a shape file is written: its name, and its value.
struct DefineSource {
    SourceLocation name;
    SourceLocation value;
};

/// A kernel the engine prepares: `name` is what the application asks for, `source` the
/// kernel file ("rms_norm" for kernel_src/rms_norm.cu), `defines` the production caps; a
/// value may name shape entries as `${d_model}`.
struct KernelSpec {
    std::string name;
    std::string source;
    std::map<std::string, std::string> defines;
    /// Another spec's name: the tier to launch when this one's tile does not fit (lose the
    /// speedup, never the launch). See Engine::function_for.
    std::string fallback{};
    /// Where the spec's `[[kernel]]` table starts (no path: declared in code).
    SourceLocation where{};
    /// Where each define is written, by define name (empty for a spec declared in code).
    std::map<std::string, DefineSource> define_sources{};
    /// Where `source` is written (its `name` when `source` is left out; no path: in code).
    SourceLocation source_where{};
    /// Template instantiations to compile, as NVRTC name expressions ("scale<128, float>");
    /// Engine::function finds each by this spelling.
    std::vector<std::string> instantiations{};
    SourceLocation instantiations_where{}; ///< where `instantiations` is written
    /// The shape the tuned table is looked up at, in the keys the kernel's sweeps use
    /// (`rows`, `n`); a value may name shape entries as `${tokens}`. Empty: no lookup.
    std::map<std::string, std::string> tuned_shape{};
    std::string tuned_dtype{}; ///< the entry's dtype ("" : any)
    /// The contract whose entries apply, when not the source's own (TunedEntry::contract).
    std::string tuned_contract{};
    /// The tuned table its shape file names (null: none): Engine::prepare injects the entry's
    /// defines for its device, under the ones the spec sets itself.
    std::shared_ptr<const TunedTable> tuned{};
    SourceLocation tuned_where{}; ///< where `tuned` is written in the [[kernel]] table
};

/// A shape file: `[shape]` with integers, `tuned` (the tuned table's path, relative to the
/// file), and `[[kernel]]` tables with name, source, defines, fallback, instantiations and
/// `tuned` (the shape its entry is looked up at, and `dtype`).
struct ShapeFile {
    ModelShape shape;
    std::vector<KernelSpec> kernels;
    std::shared_ptr<const TunedTable> tuned; ///< null when the file names none
    /// Parses `path`; ConfigError at file:line:col for any mistake (not a regular file,
    /// syntax, unknown key, wrong type, missing or repeated name, unknown fallback, no
    /// [[kernel]] at all). Every spec keeps its positions.
    static ShapeFile load(const std::filesystem::path& path);
};

/// The defines of `spec` with every `${name}` replaced by the shape's value; ConfigError
/// naming an unknown shape entry or an unclosed `${`, at the define's value when the spec
/// came from a file.
std::map<std::string, std::string> resolve_defines(const KernelSpec& spec, const ModelShape& shape);

/// The spec's tuned shape with every `${name}` replaced; ConfigError as resolve_defines, at
/// the spec's `tuned`, and for a value that is not an integer.
std::map<std::string, std::int64_t> resolve_tuned_shape(const KernelSpec& spec,
                                                        const ModelShape& shape);

} // namespace kjit
