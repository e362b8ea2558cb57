#include "tools/verbs.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

namespace kjit::cli {

namespace {
struct FreshArgs {
    std::string src = KJIT_DEFAULT_KERNEL_DIR;
    std::vector<std::string> binaries;
};

std::string when(std::int64_t ns) {
    const std::time_t t = static_cast<std::time_t>(ns / 1000000000);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
    return buf;
}

int run_fresh(const FreshArgs& args) {
    const SourceSet embedded = SourceSet::embedded();
    const SourceSet disk = SourceSet::from_directory(args.src);
    std::printf("kjit fresh: %zu embedded file(s) against %s\n", embedded.files().size(),
                args.src.c_str());
    int stale = 0;
    for (const auto& f : disk.files()) {
        const SourceFile* e = embedded.find(f.name);
        if (!e) {
            ++stale;
            std::printf("  new      %-32s on disk, not embedded: rebuild\n", f.path.c_str());
        } else if (!(e->hash == f.hash)) {
            ++stale;
            std::printf("  stale    %-32s embedded %.12s (%s), on disk %.12s (%s): rebuild\n",
                        f.path.c_str(), e->hash.hex().c_str(), when(e->mtime_ns).c_str(),
                        f.hash.hex().c_str(), when(f.mtime_ns).c_str());
        }
    }
    for (const auto& e : embedded.files())
        if (!disk.find(e.name)) {
            ++stale;
            std::printf("  missing  %-32s embedded, no longer on disk: rebuild\n", e.path.c_str());
        }
    for (const auto& b : args.binaries) {
        struct stat st {};
        if (::stat(b.c_str(), &st) != 0)
            throw ConfigError("cannot stat binary", b);
        const std::int64_t built = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                                   st.st_mtim.tv_nsec;
        for (const auto& f : disk.files())
            if (f.mtime_ns > built) {
                ++stale;
                std::printf("  stale    %-32s built %s, older than %s (%s)\n", b.c_str(),
                            when(built).c_str(), f.path.c_str(), when(f.mtime_ns).c_str());
            }
    }
    std::printf("fresh: %s\n", stale ? (std::to_string(stale) + " stale").c_str() : "up to date");
    return stale ? kFindings : kOk;
}
} // namespace

Action add_fresh(CLI::App& app) {
    auto args = std::make_shared<FreshArgs>();
    auto* sub = app.add_subcommand(
        "fresh", "compare the kernels embedded in this binary (and binaries' build times) with "
                 "the sources on disk");
    sub->add_option("--src", args->src, "kernel source directory")->capture_default_str();
    sub->add_option("--binary", args->binaries,
                    "binaries whose build time must be newer than every source");
    return [args] { return run_fresh(*args); };
}

} // namespace kjit::cli
