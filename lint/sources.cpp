#include "lint/sources.hpp"

#include "core/error.hpp"
#include "jit/includes.hpp"

#include <algorithm>

namespace kjit::lint {

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
    if (paths.empty()) // --src, KJIT_KERNEL_DIR or the project's kernels: a directory
        require_source_dir(default_dir);
    const std::vector<std::string> list =
        paths.empty() ? std::vector<std::string>{default_dir.string()} : paths;
    for (const auto& p : list) {
        const std::filesystem::path path(p);
        if (std::filesystem::is_directory(path, ec)) {
            SourceSet set = SourceSet::from_directory(path);
            if (set.files().empty()) // an empty or wrong directory would lint clean
                throw ConfigError("holds no kernel source (.cu, or a header: .cuh, .h, ...)", p);
            groups.push_back({std::move(set), {}, path});
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
            groups.push_back({SourceSet::from_directory(dir, path.parent_path().string()), {}, dir});
            g = std::prev(groups.end());
        }
        g->targets.push_back(path.filename().string());
    }
    return groups;
}

} // namespace kjit::lint
