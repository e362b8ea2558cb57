#pragma once
// Where kernel sources come from, in the one precedence every verb and the Engine use: a
// flag (--src), then KJIT_KERNEL_DIR, then the project file's `kernels`, then the copies
// embedded at build time.

#include "core/flags.hpp"
#include "jit/project.hpp"
#include "jit/source_provider.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Which of the four places the sources were taken from.
enum class SourceOrigin { flag, environment, project, embedded };

/// The sources chosen, with the project's extra include directories.
struct SourceChoice {
    SourceOrigin origin = SourceOrigin::embedded;
    std::filesystem::path dir; ///< the kernel directory; empty for the embedded copies
    /// The project file's extra include directories (whatever chose the sources).
    std::vector<std::filesystem::path> include_dirs;
    /// What verbs print after `sources: `: `embedded`, `--src k/`, `KJIT_KERNEL_DIR=k/`,
    /// `kjit.toml:3 kernels/`.
    std::string text;
    /// The project file's `kernels` as written ("kernel_src"), normalized; empty otherwise.
    std::string written;
    /// The project file consulted (absolute), whatever chose the sources; empty without one.
    std::filesystem::path project;
    /// Whether the sources are files on disk (not the embedded copies).
    [[nodiscard]] bool on_disk() const { return origin != SourceOrigin::embedded; }
    /// The sources as a set (ConfigError when the directory does not exist).
    [[nodiscard]] SourceSet load() const;
    /// A provider over the sources, carrying the include directories.
    [[nodiscard]] SourceProvider provider() const;
};

/// `flag_dir` when not empty, else KJIT_KERNEL_DIR from `flags`, else `project`'s `kernels`
/// (when a project is given and names one), else the embedded copies.
SourceChoice choose_sources(const std::string& flag_dir, const ResolvedFlags& flags,
                            const Project* project);

/// Whether `embedded` (this binary's copies) holds files of `sources`' directory: a project
/// kernel directory written as `kernels` embeds as `kernels/...` (kjit_embed_kernels' PREFIX).
bool embeds_sources(const SourceSet& embedded, const SourceChoice& sources);

/// Why an audit does not compare the embedded copies with `sources`, or nothing when it does
/// (a project's kernel directory that this binary embeds).
std::optional<std::string> audit_freshness_skip(const SourceChoice& sources,
                                                const SourceSet& embedded);

/// ConfigError when `sources` are the embedded copies: `verb` ("kjit lint") works on kernel
/// files on disk, and without a --src, KJIT_KERNEL_DIR or project file it has none (kjit's own
/// embedded kernels are never a user's).
void require_sources_on_disk(const SourceChoice& sources, std::string_view verb);

/// ConfigError when `set`, the sources `sources` chose, holds no kernel (no `.cu` file): an
/// audit (or check) would pass having looked at nothing, as over a `kernels` that names the
/// wrong directory.
void require_kernels(const SourceSet& set, const SourceChoice& sources);

/// choose_sources() with no flag, the process flags and the project file found from the
/// working directory: what an Engine built without a SourceProvider reads.
SourceChoice default_sources();

} // namespace kjit
