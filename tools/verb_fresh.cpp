#include "tools/verbs.hpp"

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
    const std::vector<std::filesystem::path> binaries(args.binaries.begin(), args.binaries.end());
    return print_fresh(check_freshness(args.src, binaries), args.src);
}
} // namespace

int print_fresh(const FreshnessReport& report, const std::string& src) {
    std::printf("kjit fresh: %zu embedded file(s) against %s\n", report.embedded_files,
                src.c_str());
    for (const FreshnessEntry& e : report.entries) {
        const char* path = e.path.c_str();
        switch (e.kind) {
        case Staleness::new_file:
            std::printf("  new      %-32s on disk, not embedded: rebuild\n", path);
            break;
        case Staleness::stale:
            std::printf("  stale    %-32s embedded %.12s (%s), on disk %.12s (%s): rebuild\n", path,
                        e.embedded_hash.hex().c_str(), when(e.embedded_mtime_ns).c_str(),
                        e.disk_hash.hex().c_str(), when(e.disk_mtime_ns).c_str());
            break;
        case Staleness::missing:
            std::printf("  missing  %-32s embedded, no longer on disk: rebuild\n", path);
            break;
        case Staleness::binary_older:
            std::printf("  stale    %-32s built %s, older than %s (%s)\n", path,
                        when(e.binary_mtime_ns).c_str(), e.source.c_str(),
                        when(e.disk_mtime_ns).c_str());
            break;
        }
    }
    std::printf("fresh: %s\n", report.fresh()
                                    ? "up to date"
                                    : (std::to_string(report.entries.size()) + " stale").c_str());
    return report.fresh() ? kOk : kFindings;
}

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
