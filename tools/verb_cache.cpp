#include "tools/verbs.hpp"

#include "core/warnings.hpp"
#include "jit/define_use.hpp"

#include <cstdio>
#include <ctime>
#include <memory>
#include <set>

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

std::filesystem::path cache_dir(const CacheArgs& args) {
    return args.dir.empty() ? DiskCache::default_dir() : std::filesystem::path(args.dir);
}

/// The directory when it does not exist yet: the verbs that only read it say so and leave it
/// uncreated (the first compile creates it).
std::optional<std::filesystem::path> no_cache_yet(const CacheArgs& args) {
    std::error_code ec;
    const std::filesystem::path dir = cache_dir(args);
    // Only a name that is not there at all; any other trouble is the cache's to report.
    if (std::filesystem::symlink_status(dir, ec).type() != std::filesystem::file_type::not_found)
        return std::nullopt;
    return dir;
}

DiskCache open_cache(const CacheArgs& args, WarningSink warn = {}) {
    return DiskCache(cache_dir(args), DiskCache::default_max_bytes(), std::move(warn));
}

/// The remote tier KJIT_REMOTE_* configure, or nullptr when KJIT_REMOTE_CACHE is not set. Its
/// warnings while `quiet` is set are dropped (the verb states the tier's state itself).
std::unique_ptr<RemoteCache> open_remote(const std::shared_ptr<bool>& quiet) {
    RemoteSettings settings = RemoteSettings::from_flags();
    if (settings.url.empty())
        return nullptr;
    return std::make_unique<RemoteCache>(std::move(settings), [quiet](const std::string& m) {
        if (!*quiet)
            warn(m);
    });
}

/// The remote tier, connected; ConfigError when it is not configured or cannot be used.
std::unique_ptr<RemoteCache> require_remote() {
    auto quiet = std::make_shared<bool>(true);
    std::unique_ptr<RemoteCache> remote = open_remote(quiet);
    if (!remote)
        throw ConfigError("no remote cache: set KJIT_REMOTE_CACHE=redis://HOST:PORT/DB (and "
                          "KJIT_REMOTE_SECRET to the file of the secret entries are signed with)");
    if (!remote->connect())
        throw ConfigError("remote cache " + remote->describe() +
                          " cannot be used: " + remote->disabled_reason());
    *quiet = false;
    return remote;
}

std::string kib(std::uint64_t bytes) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
    return s;
}

void print_remote_stats() {
    auto quiet = std::make_shared<bool>(true);
    std::unique_ptr<RemoteCache> remote = open_remote(quiet);
    std::string why;
    if (!remote) {
        if (RedisClient::available(&why))
            std::printf("remote     none (KJIT_REMOTE_CACHE=redis://HOST:PORT/DB shares entries "
                        "between hosts)\n");
        else
            std::printf("remote     unavailable: %s\n", why.c_str());
        return;
    }
    std::printf("remote     %s\n", remote->describe().c_str());
    if (!remote->connect()) {
        std::printf("  state    off: %s\n", remote->disabled_reason().c_str());
        return;
    }
    std::uint64_t bytes = 0;
    const auto entries = remote->list(false);
    for (const auto& e : entries)
        bytes += e.bytes;
    std::printf("  state    on; entries %s\n", remote->signing().c_str());
    std::printf("  entries  %zu, %s\n", entries.size(), kib(bytes).c_str());
    std::printf("  server   %s\n", remote->server_text().c_str());
}

void print_entry_row(const Hash128& key, const std::string& meta, std::uint64_t bytes,
                     std::int64_t mtime_s) {
    char when[32] = "-";
    if (mtime_s >= 0) {
        const std::time_t t = static_cast<std::time_t>(mtime_s);
        std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
    }
    std::printf("%-32s %-16s %-7s %9llu  %-19s  %s\n", key.hex().c_str(),
                meta_value(meta, "kernel").c_str(), meta_value(meta, "arch").c_str(),
                static_cast<unsigned long long>(bytes), when, meta_value(meta, "defines").c_str());
}

int run_stats(const CacheArgs& args) {
    if (const auto dir = no_cache_yet(args)) {
        std::printf("directory  %s\nstate      none yet: the first compile creates it\n",
                    dir->c_str());
        print_remote_stats();
        return kOk;
    }
    DiskCache cache = open_cache(args);
    std::printf("directory  %s\n", cache.dir().c_str());
    if (!cache.enabled()) {
        std::printf("state      disabled: %s\n", cache.disabled_reason().c_str());
    } else {
        std::uint64_t bytes = 0;
        const auto entries = cache.list(false);
        for (const auto& e : entries)
            bytes += e.bytes;
        std::printf("entries    %zu\nsize       %.1f KiB of %.1f MiB (KJIT_CACHE_MAX_BYTES)\n",
                    entries.size(), bytes / 1024.0, cache.max_bytes() / 1048576.0);
    }
    print_remote_stats();
    return kOk;
}

int run_ls(const CacheArgs& args) {
    std::printf("%-32s %-16s %-7s %9s  %-19s  %s\n", "key", "kernel", "arch", "bytes", "last use",
                "defines");
    if (!no_cache_yet(args))
        for (const auto& e : open_cache(args).list())
            print_entry_row(e.key, e.meta, e.bytes, e.mtime_ns / 1000000000);
    auto quiet = std::make_shared<bool>(true);
    std::unique_ptr<RemoteCache> remote = open_remote(quiet);
    if (!remote)
        return kOk;
    if (!remote->connect()) {
        std::printf("remote %s: off: %s\n", remote->describe().c_str(),
                    remote->disabled_reason().c_str());
        return kOk;
    }
    const auto entries = remote->list();
    std::printf("remote %s: %zu entries (metas shown unverified)\n", remote->describe().c_str(),
                entries.size());
    const std::int64_t now = std::time(nullptr);
    for (const auto& e : entries)
        print_entry_row(e.key, e.meta, e.bytes, e.idle_s < 0 ? -1 : now - e.idle_s);
    return kOk;
}

int run_push(const CacheArgs& args) {
    DiskCache cache = open_cache(args);
    std::unique_ptr<RemoteCache> remote = require_remote();
    std::size_t pushed = 0;
    std::uint64_t bytes = 0;
    std::vector<CacheEntry> batch;
    const auto flush = [&] {
        pushed += remote->store(batch);
        batch.clear();
        if (!remote->enabled())
            throw ConfigError("remote cache " + remote->describe() + " failed: " +
                              remote->disabled_reason() + " (" + std::to_string(pushed) +
                              " entries pushed before)");
    };
    for (const auto& info : cache.list(false)) {
        std::optional<CacheEntry> e = cache.load(info.key); // verified before it is signed
        if (!e)
            continue;
        bytes += e->payload.size() + e->meta.size();
        batch.push_back(std::move(*e));
        if (batch.size() == 32)
            flush();
    }
    flush();
    std::printf("pushed %zu entries (%s) from %s to %s\n", pushed, kib(bytes).c_str(),
                cache.dir().c_str(), remote->describe().c_str());
    return kOk;
}

int run_pull(const CacheArgs& args) {
    DiskCache cache = open_cache(args);
    if (!cache.enabled())
        throw ConfigError("cache pull refused: " + cache.disabled_reason());
    std::unique_ptr<RemoteCache> remote = require_remote();
    std::set<std::string> here;
    for (const auto& e : cache.list(false))
        here.insert(e.key.hex());
    std::vector<Hash128> want;
    std::size_t already = 0;
    for (const auto& e : remote->list(false)) {
        if (here.contains(e.key.hex()))
            ++already;
        else
            want.push_back(e.key);
    }
    std::size_t pulled = 0, refused = 0;
    std::uint64_t bytes = 0;
    for (std::size_t at = 0; at < want.size(); at += 32) {
        const std::span<const Hash128> keys(want.data() + at,
                                            std::min<std::size_t>(32, want.size() - at));
        for (auto& found : remote->load(keys)) {
            refused += found.refused ? 1 : 0;
            if (found.entry && cache.store(*found.entry)) {
                ++pulled;
                bytes += found.entry->payload.size() + found.entry->meta.size();
            }
        }
        if (!remote->enabled())
            throw ConfigError("remote cache " + remote->describe() + " failed: " +
                              remote->disabled_reason() + " (" + std::to_string(pulled) +
                              " entries pulled before)");
    }
    std::printf("pulled %zu entries (%s) from %s into %s; %zu already there, %zu refused\n",
                pulled, kib(bytes).c_str(), remote->describe().c_str(), cache.dir().c_str(),
                already, refused);
    return refused ? kFindings : kOk;
}

int run_clear(const CacheArgs& args) {
    if (const auto dir = no_cache_yet(args)) {
        std::printf("removed 0 entries from %s (there is no cache there yet)\n", dir->c_str());
        return kOk;
    }
    // A refused directory is an error here (clear() says why), not a warning about compiling.
    DiskCache cache = open_cache(args, [](const std::string&) {});
    std::printf("removed %zu entries from %s\n", cache.clear(), cache.dir().c_str());
    return kOk;
}

int run_why(const CacheArgs& args) {
    const SourceSet& set = args.sources.load();
    CompileOptions options;
    options.arch = args.arch;
    options.toolkit_headers = true; // as kjit compile and the Engine
    options.include_dirs = args.include_dirs;
    for (const auto& d : args.defines)
        add_define(options.defines, d);
    // As kjit compile: a key for a define the kernel never reads explains nothing it compiles.
    require_defines_read(set, set.kernel(args.kernel), options.defines, "-D");
    const CacheKey key = make_cache_key(set, args.kernel, options);
    std::printf("request  %s %s defines: %s\nkey      %s\n", key.kernel.c_str(),
                options.arch.c_str(), options.defines_text().c_str(), key.hex().c_str());
    std::optional<DiskCache> cache;
    if (!no_cache_yet(args))
        cache.emplace(cache_dir(args), DiskCache::default_max_bytes());
    if (cache && cache->load(key.hash)) {
        std::printf("hit: an entry with this key is in %s\n", cache->dir().c_str());
        return kOk;
    }
    // The remote tier: a verified entry is a hit; a refused one is reported by the warning.
    auto quiet = std::make_shared<bool>(true);
    std::unique_ptr<RemoteCache> remote = open_remote(quiet);
    if (remote && !remote->connect()) {
        std::printf("remote   off: %s\n", remote->disabled_reason().c_str());
        remote.reset();
    }
    *quiet = false;
    if (remote && remote->load(std::span(&key.hash, 1)).front().entry) {
        std::printf("hit: a verified entry with this key is in the remote cache %s\n",
                    remote->describe().c_str());
        return kOk;
    }
    // The nearest entry of the same kernel: the most key components in common.
    struct Candidate {
        Hash128 key;
        std::string meta;
        bool remote = false;
    };
    std::vector<Candidate> candidates;
    if (cache)
        for (auto& e : cache->list())
            candidates.push_back({e.key, std::move(e.meta), false});
    if (remote)
        for (auto& e : remote->list())
            candidates.push_back({e.key, std::move(e.meta), true});
    const Candidate* best = nullptr;
    int best_same = -1;
    std::vector<std::string> best_parts;
    for (const auto& e : candidates) {
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
        std::printf("miss: no entry for kernel %s in %s%s\n", key.kernel.c_str(),
                    cache_dir(args).c_str(),
                    remote ? (" or in the remote cache " + remote->describe()).c_str() : "");
        return kOk;
    }
    std::printf("miss: nearest entry %s (%s, defines: %s)%s differs in:\n", best->key.hex().c_str(),
                meta_value(best->meta, "arch").c_str(), meta_value(best->meta, "defines").c_str(),
                best->remote ? " in the remote cache" : "");
    for (std::size_t i = 0; i < KeyComponents::kCount; ++i) {
        const bool same = i < best_parts.size() && best_parts[i] == hex64(key.components.hashes[i]);
        std::printf("  %-8s %s\n", KeyComponents::kNames[i], same ? "same" : "DIFFERENT");
    }
    return kOk;
}
} // namespace

Action add_cache(CLI::App& app) {
    auto args = std::make_shared<CacheArgs>();
    auto* sub = app.add_subcommand("cache", "inspect, clear or share the compile cache");
    sub->require_subcommand(1);
    sub->add_option("--dir", args->dir, "cache directory (default: KJIT_CACHE_DIR, XDG, ~/.cache)");
    auto* stats = sub->add_subcommand(
        "stats", "directory, entries, size and cap; the remote cache (KJIT_REMOTE_CACHE) too");
    auto* ls = sub->add_subcommand(
        "ls", "every entry with kernel, arch, size, last use, defines; the remote cache's too");
    auto* clear = sub->add_subcommand(
        "clear", "remove every entry, the locks no process holds and the temporary files of "
                 "writers that are gone (nothing else: only kjit's own files; never remote ones)");
    auto* why = sub->add_subcommand(
        "why", "the key of a request and, against the nearest entry of the same kernel (on disk "
               "or in the remote cache), which component differs");
    why->add_option("kernel", args->kernel, "kernel name")->required();
    why->add_option("--arch", args->arch, "target architecture")
        ->capture_default_str()
        ->check(arch_check());
    why->add_option("-D,--define", args->defines, "NAME=VALUE injected as a define");
    why->add_option("-I,--include-dir", args->include_dirs,
                    "extra include directory (keyed by the content of its files)");
    args->sources.add_to(*why);
    auto* push = sub->add_subcommand(
        "push", "sign every verified entry of the disk cache and write it to the remote cache");
    auto* pull = sub->add_subcommand(
        "pull", "write every remote entry that verifies into the disk cache (exit 1 when one "
                "is refused)");
    // `kjit cache ls --dir D` as well as `kjit cache --dir D ls`.
    for (CLI::App* verb : {stats, ls, clear, why, push, pull})
        verb->fallthrough();
    return [args, stats, ls, clear, push, pull] {
        if (stats->parsed())
            return run_stats(*args);
        if (ls->parsed())
            return run_ls(*args);
        if (clear->parsed())
            return run_clear(*args);
        if (push->parsed())
            return run_push(*args);
        if (pull->parsed())
            return run_pull(*args);
        return run_why(*args);
    };
}

} // namespace kjit::cli
