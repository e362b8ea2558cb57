#pragma once
// The define sets the engine injects into each kernel: the `[[kernel]]` tables of shape files.

#include "core/diagnostic.hpp"
#include "jit/sources.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kjit::lint {

/// One kernel the engine specializes: a `[[kernel]]` of a shape file with its defines resolved.
struct Injection {
    std::string spec;   ///< the kernel's name ("rms_norm_prefill")
    std::string source; ///< its source kernel ("rms_norm")
    std::string file;   ///< the shape file, as diagnostics print it
    std::map<std::string, std::string> defines;
    std::map<std::string, SourceLocation> where; ///< where each define's name is written in `file`
    /// A contract's define set (its [defines], a check case's, its reference's), not a shape
    /// file's: the walk (KJ003) takes its names as injected, as the contract's compiles inject
    /// them; the production rules (KJ002, KJ004) leave it to the contract's own checks.
    bool contract = false;
    /// The template instantiations the engine names (KernelSpec::instantiations), and where.
    std::vector<std::string> instantiations{};
    SourceLocation instantiations_where{};
};

/// The kernels of a shape file (read by jit's ShapeFile, with its positions); ConfigError at
/// file:line:col when it is broken.
std::vector<Injection> load_injections(const std::filesystem::path& shape_file);

/// The defines injected by the shape files `files`, each read fail closed: a file that does not
/// parse, names a kernel `sources` lacks (when given) or a `${}` its shape lacks is a
/// ConfigError at its file:line:col.
std::vector<Injection> shape_injections(const std::vector<std::filesystem::path>& files,
                                        const SourceSet* sources);

/// Every `*.toml` directly in `dir` that parses as a shape file; `skipped` gets a note for
/// each one that does not.
std::vector<Injection> find_injections(const std::filesystem::path& dir,
                                       std::vector<std::string>* skipped = nullptr);

} // namespace kjit::lint
