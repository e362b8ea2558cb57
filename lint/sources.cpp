#include "lint/sources.hpp"

#include "core/error.hpp"
#include "jit/includes.hpp"

#include <algorithm>

namespace kjit::lint {

namespace {

namespace fs = std::filesystem;

// The set of the tree under `dir`, as the compiler reads it (SourceSet::from_directory: every
// header is offered NVRTC in memory, so an "x.h" beside a kernel is found). A directory that
// cannot be read is an environment error naming it (exit 2), never a finding.
SourceSet tree(const fs::path& dir, const std::string& display_prefix = {}) {
    try {
        return SourceSet::from_directory(dir, display_prefix);
    } catch (const fs::filesystem_error& e) {
        const fs::path where = e.path1().empty() ? dir : e.path1();
        throw ConfigError("cannot read the kernel tree: " + e.code().message(), where.string());
    }
}

} // namespace

std::vector<SourceGroup> source_groups(const std::vector<std::string>& paths, bool embedded,
                                       const std::filesystem::path& default_dir) {
    std::error_code ec;
    std::vector<SourceGroup> groups;
    if (embedded) {
        if (!paths.empty())
            throw ConfigError("--embedded takes no FILES");
        SourceGroup g{SourceSet::embedded(), {}, {}};
        if (std::filesystem::is_directory(default_dir, ec))
            g.dir = default_dir;
        groups.push_back(std::move(g));
        return groups;
    }
    const std::vector<std::string> list =
        paths.empty() ? std::vector<std::string>{default_dir.string()} : paths;
    for (const auto& p : list) {
        const std::filesystem::path path(p);
        if (std::filesystem::is_directory(path, ec)) {
            groups.push_back({tree(path), {}, path});
            continue;
        }
        if (!std::filesystem::exists(path, ec))
            throw ConfigError("no such file or directory", p);
        if (path.extension() != ".cu" && !has_header_extension(path.filename().string()))
            throw ConfigError("not a kernel source (.cu, or a header: .cuh, .h, ...)", p);
        std::filesystem::path dir = path.parent_path();
        if (dir.empty())
            dir = ".";
        auto g = std::find_if(groups.begin(), groups.end(), [&](const SourceGroup& x) {
            return !x.targets.empty() && x.dir == dir;
        });
        if (g == groups.end()) {
            groups.push_back({tree(dir, path.parent_path().string()), {}, dir});
            g = std::prev(groups.end());
        }
        g->targets.push_back(path.filename().string());
    }
    return groups;
}

} // namespace kjit::lint
