#include "jit/include_resolver.hpp"

#include <dlfcn.h>
#include <nvrtc.h>


namespace kjit {

namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

// The toolkit include directory that holds `lib`'s libnvrtc, or an empty path.
fs::path include_beside(const fs::path& lib) {
    std::error_code ec;
    const fs::path real = fs::canonical(lib, ec);
    if (ec)
        return {};
    // lib/, lib64/ and targets/<triple>/lib/ all sit beside the include/ they belong to.
    for (fs::path dir = real.parent_path(); !dir.empty() && dir != dir.root_path();
         dir = dir.parent_path()) {
        if (is_file(dir / "include" / "cuda_fp16.h"))
            return dir / "include";
        if (dir.filename() != "lib" && dir.filename() != "lib64")
            break;
    }
    return {};
}

std::vector<fs::path> find_toolkit() {
    fs::path include;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<const void*>(&nvrtcVersion), &info) != 0 && info.dli_fname)
        include = include_beside(info.dli_fname);
    if (include.empty() && is_file("/usr/local/cuda/include/cuda_fp16.h"))
        include = "/usr/local/cuda/include";
    if (include.empty())
        return {};
    std::vector<fs::path> dirs{include};
    std::error_code ec;
    if (fs::is_directory(include / "cccl", ec))
        dirs.push_back(include / "cccl");
    return dirs;
}

} // namespace

const std::vector<fs::path>& toolkit_include_dirs() {
    static const std::vector<fs::path> dirs = find_toolkit();
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
