#include "tools/verbs.hpp"

#include <cstdio>
#include <ctime>
#include <memory>

namespace kjit::cli {

namespace {
struct CacheArgs {
    std::string dir;
    // why
    SourceOptions sources;
    std::string kernel;
    std::string arch = "sm_90";
    std::vector<std::string> defines;
    std::vector<std::string> include_dirs;
};

DiskCache open_cache(const CacheArgs& args, WarningSink warn = {}) {
    return DiskCache(args.dir.empty() ? DiskCache::default_dir() : std::filesystem::path(args.dir),
                     DiskCache::default_max_bytes(), std::move(warn));
}

int run_stats(const CacheArgs& args) {
    DiskCache cache = open_cache(args);
    std::printf("directory  %s\n", cache.dir().c_str());
    if (!cache.enabled()) {
        std::printf("state      disabled: %s\n", cache.disabled_reason().c_str());
        return kOk;
    }
    std::uint64_t bytes = 0;
    const auto entries = cache.list(false);
    for (const auto& e : entries)
        bytes += e.bytes;
    std::printf("entries    %zu\nsize       %.1f KiB of %.1f MiB (KJIT_CACHE_MAX_BYTES)\n",
                entries.size(), bytes / 1024.0, cache.max_bytes() / 1048576.0);
    return kOk;
}

int run_ls(const CacheArgs& args) {
    DiskCache cache = open_cache(args);
    std::printf("%-32s %-16s %-7s %9s  %-19s  %s\n", "key", "kernel", "arch", "bytes", "last use",
                "defines");
    for (const auto& e : cache.list()) {
        const std::time_t t = static_cast<std::time_t>(e.mtime_ns / 1000000000);
        char when[32];
        std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
        std::printf("%-32s %-16s %-7s %9llu  %-19s  %s\n", e.key.hex().c_str(),
                    meta_value(e.meta, "kernel").c_str(), meta_value(e.meta, "arch").c_str(),
                    static_cast<unsigned long long>(e.bytes), when,
                    meta_value(e.meta, "defines").c_str());
    }
    return kOk;
}

int run_clear(const CacheArgs& args) {
    // A refused directory is an error here (clear() says why), not a warning about compiling.
    DiskCache cache = open_cache(args, [](const std::string&) {});
    std::printf("removed %zu entries from %s\n", cache.clear(), cache.dir().c_str());
    return kOk;
}

int run_why(const CacheArgs& args) {
    const SourceSet set = args.sources.load();
    CompileOptions options;
    options.arch = args.arch;
    options.toolkit_headers = true; // as kjit compile and the Engine
    options.include_dirs = args.include_dirs;
    for (const auto& d : args.defines)
        add_define(options.defines, d);
    const CacheKey key = make_cache_key(set, args.kernel, options);
    DiskCache cache = open_cache(args);
    std::printf("request  %s %s defines: %s\nkey      %s\n", key.kernel.c_str(),
                options.arch.c_str(), options.defines_text().c_str(), key.hex().c_str());
    if (cache.load(key.hash)) {
        std::printf("hit: an entry with this key is in %s\n", cache.dir().c_str());
        return kOk;
    }
    // The nearest entry of the same kernel: the most key components in common.
    const DiskEntryInfo* best = nullptr;
    int best_same = -1;
    std::vector<std::string> best_parts;
    const auto entries = cache.list();
    for (const auto& e : entries) {
        if (meta_value(e.meta, "kernel") != key.kernel)
            continue;
        std::vector<std::string> parts;
        const std::string c = meta_value(e.meta, "components");
        for (std::size_t pos = 0; pos <= c.size();) {
            const std::size_t end = std::min(c.find(',', pos), c.size());
            parts.push_back(c.substr(pos, end - pos));
            pos = end + 1;
        }
        int same = 0;
        for (std::size_t i = 0; i < KeyComponents::kCount && i < parts.size(); ++i)
            same += parts[i] == hex64(key.components.hashes[i]) ? 1 : 0;
        if (same > best_same) {
            best_same = same;
            best = &e;
            best_parts = std::move(parts);
        }
    }
    if (!best) {
        std::printf("miss: no entry for kernel %s in %s\n", key.kernel.c_str(),
                    cache.dir().c_str());
        return kOk;
    }
    std::printf("miss: nearest entry %s (%s, defines: %s) differs in:\n", best->key.hex().c_str(),
                meta_value(best->meta, "arch").c_str(), meta_value(best->meta, "defines").c_str());
    for (std::size_t i = 0; i < KeyComponents::kCount; ++i) {
        const bool same = i < best_parts.size() && best_parts[i] == hex64(key.components.hashes[i]);
        std::printf("  %-8s %s\n", KeyComponents::kNames[i], same ? "same" : "DIFFERENT");
    }
    return kOk;
}
} // namespace

Action add_cache(CLI::App& app) {
    auto args = std::make_shared<CacheArgs>();
    auto* sub = app.add_subcommand("cache", "inspect or clear the compile cache");
    sub->require_subcommand(1);
    sub->add_option("--dir", args->dir, "cache directory (default: KJIT_CACHE_DIR, XDG, ~/.cache)");
    auto* stats = sub->add_subcommand("stats", "directory, entries, size and cap");
    auto* ls = sub->add_subcommand("ls", "every entry with kernel, arch, size, last use, defines");
    auto* clear = sub->add_subcommand(
        "clear", "remove every entry, the locks no process holds and the temporary files of "
                 "writers that are gone (nothing else: only kjit's own files)");
    auto* why = sub->add_subcommand(
        "why", "the key of a request and, against the nearest entry of the same kernel, which "
               "component differs");
    why->add_option("kernel", args->kernel, "kernel name")->required();
    why->add_option("--arch", args->arch, "target architecture")->capture_default_str();
    why->add_option("-D,--define", args->defines, "NAME=VALUE injected as a define");
    why->add_option("-I,--include-dir", args->include_dirs,
                    "extra include directory (keyed by the content of its files)");
    args->sources.add_to(*why);
    return [args, stats, ls, clear, why] {
        if (stats->parsed())
            return run_stats(*args);
        if (ls->parsed())
            return run_ls(*args);
        if (clear->parsed())
            return run_clear(*args);
        (void)why;
        return run_why(*args);
    };
}

} // namespace kjit::cli
