#pragma once
// Which kernel files a lint verb works on, from its command line.

#include "jit/sources.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kjit::lint {

/// Kernel files to lint or list: the set their includes resolve in, the names chosen (empty:
/// all), and the directory whose shape files apply (empty: none).
struct SourceGroup {
    SourceSet sources;
    std::vector<std::string> targets;
    std::filesystem::path dir;
};

/// `paths` (files or directories; `default_dir` when empty) as groups, or the embedded set
/// with `default_dir`'s shape files; ConfigError for a path that is no kernel source.
std::vector<SourceGroup> source_groups(const std::vector<std::string>& paths, bool embedded,
                                       const std::filesystem::path& default_dir);

} // namespace kjit::lint
