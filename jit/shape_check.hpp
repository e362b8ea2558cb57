#pragma once
// Shape files read against the kernel sources they are for: every verb that reads shape files
// refuses one that names a kernel the sources lack, or a `${}` the shape lacks, at its
// file:line:col, instead of leaving that kernel out.

#include "jit/project.hpp"
#include "jit/shape_file.hpp"
#include "jit/source_choice.hpp"
#include "jit/sources.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kjit {

/// `shape` (read from a file) against `sources`: ConfigError at the first define whose `${}`
/// does not resolve, else at the `source` (or `name`) of the first [[kernel]] whose kernel is
/// not in the set (did-you-mean and the known kernels).
void check_shape_file(const ShapeFile& shape, const SourceSet& sources);

/// ShapeFile::load(path), then check_shape_file() against `sources`.
ShapeFile load_checked_shape_file(const std::filesystem::path& path, const SourceSet& sources);

/// The shape files a verb reads: `flag_files` (--shape-file) when any, else the project's
/// `shape_files` when the project names some, else the `*.toml` beside the sources when they
/// are on disk (shape_files_beside), else none.
std::vector<std::filesystem::path> choose_shape_files(const std::vector<std::string>& flag_files,
                                                      const Project* project,
                                                      const SourceChoice& sources);

} // namespace kjit
