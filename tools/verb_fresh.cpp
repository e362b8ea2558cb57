#include "tools/verbs.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

namespace kjit::cli {

namespace {
struct FreshArgs {
    SourceOptions sources;
    std::vector<std::string> binaries;
};

std::string when(std::int64_t ns) {
    const std::time_t t = static_cast<std::time_t>(ns / 1000000000);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
    return buf;
}

// Prints one binary's report; kFindings when anything is out of date.
int print_fresh(const FreshnessReport& report, const std::string& what, const std::string& src) {
    std::printf("kjit fresh: %s: %zu embedded file(s) against %s\n", what.c_str(),
                report.embedded_files, src.c_str());
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
        }
    }
    std::printf("fresh: %s\n", report.fresh()
                                    ? "up to date"
                                    : (std::to_string(report.entries.size()) + " stale").c_str());
    return report.fresh() ? kOk : kFindings;
}

int run_fresh(const FreshArgs& args) {
    const SourceChoice& choice = args.sources.on_disk("kjit fresh");
    const std::vector<FreshBinary> binaries = fresh_binaries(args.sources, args.binaries);
    SourceSet disk = SourceSet::from_directory(choice.dir);
    if (binaries.empty()) {
        // This kjit's embedded copies are kjit's own kernels: against a user's tree every file
        // would read "new" and every embedded one "missing", a rebuild that never helps.
        const SourceSet& embedded = SourceSet::embedded();
        const bool project = choice.origin == SourceOrigin::project;
        // A copy of kjit's tree holds one of its kernels; a header name (common.cuh) alone is
        // any project's.
        const bool shared =
            std::any_of(disk.files().begin(), disk.files().end(), [&](const SourceFile& f) {
                return f.name.ends_with(".cu") && embedded.find(f.name);
            });
        if (project ? !embeds_sources(embedded, choice) : !shared)
            throw ConfigError(
                "kjit fresh: this kjit embeds no copy of " +
                (project ? choice.written + "/" : "any kernel of " + choice.dir.string()) +
                " (its embedded kernels are kjit's own): name the binaries to compare with the "
                "sources, --binary APP" +
                (project ? " or `binaries` in " + display_path(args.sources.project_file()->file)
                         : std::string()));
    }
    return check_fresh(choice, disk, binaries);
}
} // namespace

std::vector<FreshBinary> fresh_binaries(const SourceOptions& sources,
                                        const std::vector<std::string>& flags) {
    std::vector<FreshBinary> out;
    for (const auto& f : flags)
        out.push_back({f, std::nullopt});
    // The project's binaries embed the project's kernels: they are compared only when those
    // are the sources (not with --src or KJIT_KERNEL_DIR).
    if (out.empty() && sources.choice().origin == SourceOrigin::project)
        for (const ProjectPath& b : sources.project_file()->binaries)
            out.push_back({b.path, b.where});
    return out;
}

int check_fresh(const SourceChoice& choice, const SourceSet& disk,
                const std::vector<FreshBinary>& binaries) {
    const std::string src = choice.dir.string();
    if (binaries.empty())
        return print_fresh(check_freshness(manifest_of(SourceSet::embedded()), disk), "this kjit",
                           src);
    int status = kOk;
    for (const FreshBinary& b : binaries) {
        std::error_code ec;
        if (b.named_at && !std::filesystem::exists(b.path, ec))
            throw ConfigError("'binaries' names " + display_path(b.path) +
                                  ", which does not exist: build it first",
                              *b.named_at);
        const EmbedManifest m = manifest_for(b.path, disk);
        status = std::max(status, print_fresh(check_freshness(m, disk), display_path(b.path), src));
    }
    return status;
}

Action add_fresh(CLI::App& app) {
    auto args = std::make_shared<FreshArgs>();
    auto* sub = app.add_subcommand(
        "fresh", "compare the kernel sources a binary embeds (this kjit, --binary APP, or the "
                 "project file's binaries) with the sources on disk, by content");
    args->sources.add_to(*sub);
    sub->add_option("--binary", args->binaries,
                    "a program built with kjit_embed_kernels(): its embedded sources are "
                    "compared instead of this kjit's (default: the project file's binaries)");
    return [args] { return run_fresh(*args); };
}

} // namespace kjit::cli
