#include "tools/verbs.hpp"

#include "core/flags.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

namespace kjit::cli {

void SourceOptions::add_to(CLI::App& app) {
    app.add_option("--src", dir,
                   "read kernels from this directory instead of the copies embedded at build time");
}

SourceSet SourceOptions::load() const {
    return dir.empty() ? SourceSet::embedded() : SourceSet::from_directory(dir);
}

std::string SourceOptions::describe() const {
    return dir.empty() ? "embedded at build time" : "from " + dir;
}

void CacheOptions::add_to(CLI::App& app) {
    app.add_flag("--no-cache", no_cache, "bypass the compile cache: compile everything");
    app.add_option("-j,--jobs", jobs, "parallel compiles (default: KJIT_COMPILE_JOBS or cores)");
}

CacheSettings CacheOptions::settings() const {
    const ResolvedFlags flags = builtin_flags().resolve();
    CacheSettings s;
    s.use_disk = !no_cache && !flags.get_bool(kFlagNoCache);
    s.jobs = jobs > 0 ? jobs : static_cast<int>(flags.get_int(kFlagCompileJobs));
    std::error_code ec;
    s.worker = std::filesystem::read_symlink("/proc/self/exe", ec);
    return s;
}

CompileProgress progress_line(const std::string& what) {
    if (!::isatty(STDERR_FILENO))
        return {};
    return [what](std::size_t done, std::size_t total, const std::string& kernel) {
        std::fprintf(stderr, "\r\033[K%s [%zu/%zu] %s", what.c_str(), done, total, kernel.c_str());
        if (done == total)
            std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    };
}

} // namespace kjit::cli
