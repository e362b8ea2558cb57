#include "lint/detail/libclang_api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

namespace kjit::lint {

namespace {

std::vector<std::string> candidates() {
    std::vector<std::string> out{"libclang.so.1",    "libclang-14.so.1", "libclang-16.so.1",
                                 "libclang-15.so.1", "libclang-17.so.1", "libclang-18.so.1"};
    std::error_code ec;
    std::vector<std::filesystem::path> dirs;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib", ec))
        if (e.path().filename().string().starts_with("llvm-"))
            dirs.push_back(e.path() / "lib");
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
        std::vector<std::string> found;
        for (const auto& f : std::filesystem::directory_iterator(d, ec)) {
            const std::string name = f.path().filename().string();
            if (name.starts_with("libclang") && !name.starts_with("libclang-cpp") &&
                name.find(".so.") != std::string::npos)
                found.push_back(f.path().string());
        }
        std::sort(found.begin(), found.end());
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

} // namespace

std::unique_ptr<Libclang> Libclang::open(const std::string& path, std::string* why_not) {
    const std::vector<std::string> tried = path.empty() ? candidates() : std::vector{path};
    std::string errors;
    for (const auto& name : tried) {
        void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            if (!path.empty())
                errors = ::dlerror();
            continue;
        }
        // Never dlclose'd: LLVM's static destructors must not run after the library is gone.
        auto api = std::make_unique<Api>();
        std::string missing;
#define KJIT_LOAD(fn)                                                                              \
    api->fn = reinterpret_cast<decltype(api->fn)>(::dlsym(handle, #fn));                           \
    if (!api->fn)                                                                                  \
        missing += (missing.empty() ? "" : ", ") + std::string(#fn);
        KJIT_LIBCLANG_API(KJIT_LOAD)
#undef KJIT_LOAD
        if (!missing.empty()) {
            errors = name + " lacks " + missing;
            continue;
        }
        std::unique_ptr<Libclang> lib(new Libclang);
        lib->api_ = std::move(api);
        lib->path_ = name;
        return lib;
    }
    if (why_not) {
        if (!errors.empty())
            *why_not = "cannot use libclang: " + errors;
        else
            *why_not = "no libclang found (tried libclang.so.1, libclang-14.so.1 ... 18 and "
                       "/usr/lib/llvm-*/lib; install libclang-14-dev or libclang1-16)";
    }
    return nullptr;
}

Libclang::~Libclang() = default;

std::string Libclang::version() const {
    return api_->str(api_->clang_getClangVersion());
}

} // namespace kjit::lint
