#pragma once
// kjit.toml: a project's kernel directory, extra include directories, shape, sweep and contract
// files, digest baselines, tuned table and target arches. Found by walking up from the working
// directory, as git and cargo find theirs; every path in it is relative to its directory.

#include "core/diagnostic.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kjit {

/// The project file's name.
inline constexpr const char* kProjectFileName = "kjit.toml";

/// A path a project file names: resolved against the file's directory, with where it is written.
struct ProjectPath {
    std::filesystem::path path; ///< the project directory joined with `text`, normalized
    std::string text;           ///< as written
    SourceLocation where;       ///< where the value is written
};

/// A parsed kjit.toml.
struct Project {
    std::filesystem::path file;          ///< the file read, absolute
    std::optional<ProjectPath> kernels;  ///< `kernels`: the kernel source directory
    std::vector<ProjectPath> include_dirs; ///< `include_dirs`: extra -I, keyed by content
    std::vector<ProjectPath> shape_files;  ///< `shape_files`: production define sets
    std::vector<ProjectPath> sweep_files;  ///< `sweep_files`: what `kjit sweep` runs
    /// `contracts`: contract files (docs/contracts.md) that check, bench, digest and sweep
    /// read for the project's kernels
    std::vector<ProjectPath> contracts;
    std::optional<ProjectPath> baselines;  ///< `baselines`: the digest baselines' directory
    std::optional<ProjectPath> tuned;      ///< `tuned`: the tuned table's file
    std::vector<std::string> archs;        ///< `archs`: target architectures ("sm_90")
    /// `binaries`: the programs built with kjit_embed_kernels() that `kjit fresh` compares with
    /// the sources (they need not exist when the file is read: a fresh clone has not built them)
    std::vector<ProjectPath> binaries;

    /// Parses `file`; ConfigError at file:line:col for a syntax error, an unknown key, a wrong
    /// type, a bad arch, or a kernel directory, include directory, shape or sweep file that
    /// does not exist.
    static Project load(const std::filesystem::path& file);
    /// The nearest kjit.toml in `start` or a directory above it, or nullopt.
    static std::optional<std::filesystem::path> find(const std::filesystem::path& start);
    /// `explicit_file` loaded when given (ConfigError when it does not exist), else the
    /// project file found from the working directory, else nullopt.
    static std::optional<Project> discover(const std::filesystem::path& explicit_file = {});
};

/// `path` as messages show it: relative to the working directory when below it, else as is.
std::string display_path(const std::filesystem::path& path);

/// "kjit.toml:3" for a location: the file as display_path() shows it, then the line.
std::string display_location(const SourceLocation& where);

/// The `*.toml` files directly in `dir` that are not sweep files (`*.sweep.toml`) and are meant
/// as shape files (with `[shape]`, `[[kernel]]` or a key close to them, or not parsing, or
/// empty: another tool's file such as pyproject.toml is left out), sorted: the shape files
/// beside a kernel tree when no project or flag names any.
std::vector<std::filesystem::path> shape_files_beside(const std::filesystem::path& dir);

/// The `*.toml` files under `root` (four directories deep at most; hidden directories and build
/// trees, those with a CMakeCache.txt, skipped) that declare `[[kernel]]` tables: shape files,
/// sorted. What a project that reads none may have meant to name.
std::vector<std::filesystem::path> shape_files_under(const std::filesystem::path& root);

} // namespace kjit
