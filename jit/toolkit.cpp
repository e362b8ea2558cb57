#include "jit/toolkit.hpp"

#include "jit/includes.hpp"

#include <dlfcn.h>
#include <nvrtc.h>

#include <filesystem>

namespace kjit {

namespace fs = std::filesystem;

namespace {

bool present(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

} // namespace

std::vector<std::string> toolkit_include_dirs_beside(const std::string& lib_dir) {
    // lib64/ (or lib/, or targets/<triple>/lib/) sits beside include/.
    std::error_code ec;
    const fs::path lib = fs::weakly_canonical(lib_dir, ec);
    for (const fs::path& include : {lib.parent_path() / "include",
                                    lib.parent_path().parent_path() / "include"}) {
        if (!present(include / "cuda_fp16.h"))
            continue;
        std::vector<std::string> out;
        // CCCL first, as nvcc searches it: include/ may hold older copies of the same names.
        if (present(include / "cccl" / "cub"))
            out.push_back((include / "cccl").string());
        out.push_back(include.string());
        // kjit compiles with --no-source-include (a kernel reads only the headers it was
        // given), so NVRTC does not look beside a toolkit header for the sibling it includes
        // by a quoted name ("info.h" from cooperative_groups/details/driver_abi.h, "mma.hpp"
        // from crt/mma.h): those directories are searched last.
        for (const char* sub : {"crt", "cooperative_groups", "cooperative_groups/details", "nvtx3",
                                "nvtx3/nvtxDetail"})
            if (present(include / sub))
                out.push_back((include / sub).string());
        return out;
    }
    return {};
}

const std::vector<std::string>& default_toolkit_include_dirs() {
    static const std::vector<std::string> dirs = [] {
        Dl_info info{};
        if (::dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) != 0 && info.dli_fname) {
            auto found = toolkit_include_dirs_beside(fs::path(info.dli_fname).parent_path());
            if (!found.empty())
                return found;
        }
        return toolkit_include_dirs_beside("/usr/local/cuda/lib64");
    }();
    return dirs;
}

std::vector<std::string> toolkit_dirs_for(const CompileOptions& options, const SourceSet& sources,
                                          const SourceFile& kernel) {
    const std::vector<std::string> dirs = options.toolkit_dirs();
    if (!options.toolkit_include_dirs.empty() || dirs.empty())
        return dirs;
    std::vector<const SourceFile*> files = sources.includable(kernel);
    files.push_back(&kernel);
    for (const SourceFile* f : files)
        for (const std::string& name : scan_includes(f->text).names)
            if (!sources.find(name))
                for (const std::string& dir : dirs)
                    if (present(fs::path(dir) / name))
                        return dirs;
    return {};
}

} // namespace kjit
