#include "jit/include_resolver.hpp"

#include "jit/toolkit.hpp"

namespace kjit {

namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

} // namespace

const std::vector<fs::path>& toolkit_include_dirs() {
    // The directories a compile searches (jit/toolkit.hpp): the linter resolves as NVRTC will.
    static const std::vector<fs::path> dirs(default_toolkit_include_dirs().begin(),
                                            default_toolkit_include_dirs().end());
    return dirs;
}

IncludeResolver::IncludeResolver(const SourceSet& sources, std::vector<fs::path> include_dirs,
                                 std::vector<fs::path> toolkit_dirs)
    : sources_(&sources), include_dirs_(std::move(include_dirs)),
      toolkit_dirs_(std::move(toolkit_dirs)) {}

ResolvedInclude IncludeResolver::resolve(std::string_view name, bool angled,
                                         std::string_view includer) const {
    ResolvedInclude r;
    if (name.empty())
        return r;
    if (const SourceFile* f = sources_->find(name)) {
        r.where = ResolvedInclude::Where::source;
        r.file = f;
        return r;
    }
    const fs::path rel{std::string(name)};
    if (!rel.is_absolute()) {
        for (const auto& dir : include_dirs_)
            if (is_file(dir / rel)) {
                r.where = ResolvedInclude::Where::include_dir;
                r.path = dir / rel;
                return r;
            }
        for (const auto& dir : toolkit_dirs_)
            if (is_file(dir / rel)) {
                r.where = ResolvedInclude::Where::toolkit;
                r.path = dir / rel;
                return r;
            }
    } else if (is_file(rel)) {
        r.where = ResolvedInclude::Where::include_dir;
        r.path = rel;
        return r;
    }
    if (!angled && !includer.empty()) {
        // Normalised relative to the includer's directory ("./x.cuh" in "k.cu" is "x.cuh"),
        // since the set names its files in normal form.
        const fs::path dir = fs::path(std::string(includer)).parent_path();
        const std::string near = (dir / rel).lexically_normal().generic_string();
        if (near != name)
            r.beside = sources_->find(near);
    }
    return r;
}

std::vector<const SourceFile*> IncludeResolver::headers(const SourceFile& kernel) const {
    return sources_->includable(kernel);
}

std::vector<std::string> IncludeResolver::search_dirs() const {
    std::vector<std::string> out;
    for (const auto& d : include_dirs_)
        out.push_back(d.string());
    for (const auto& d : toolkit_dirs_)
        out.push_back(d.string());
    return out;
}

} // namespace kjit
