#include "jit/cache_files.hpp"
#include "jit/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

// What leaves a cache directory, and how it is listed: LRU eviction after each store, `kjit
// cache clear`, and reclaiming the files of writers that are gone. Only kjit's own files are
// touched (jit/cache_files.hpp).
namespace kjit {

namespace fs = std::filesystem;

namespace {

/// A temporary file older than this is reclaimed whatever its writer (another host's, or a
/// pid that was reused): writing an entry takes milliseconds.
constexpr std::int64_t kTempMaxAgeNs = 3600LL * 1000000000LL;

std::int64_t to_ns(const struct timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

/// The files of a cache directory whose names match kjit's patterns and that are regular files
/// of the current user, with their stat.
struct OwnFile {
    fs::path path;
    CacheFileName name;
    struct stat st;
};

std::vector<OwnFile> own_files(const fs::path& dir) {
    std::vector<OwnFile> out;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        OwnFile f{it->path(), parse_cache_file_name(it->path().filename().string()), {}};
        if (f.name.kind != CacheFileKind::other && owned_regular_file(f.path, &f.st))
            out.push_back(std::move(f));
    }
    return out;
}

bool temp_reclaimable(const OwnFile& f, std::int64_t now) {
    return f.name.kind == CacheFileKind::temp &&
           (temp_writer_gone(f.name) || to_ns(f.st.st_mtim) < now - kTempMaxAgeNs);
}

std::int64_t wall_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

std::vector<DiskEntryInfo> DiskCache::list(bool with_meta) const {
    std::vector<DiskEntryInfo> out;
    for (const OwnFile& f : own_files(dir_)) {
        if (f.name.kind != CacheFileKind::entry)
            continue;
        DiskEntryInfo info;
        info.key = f.name.key;
        info.bytes = static_cast<std::uint64_t>(f.st.st_size);
        info.mtime_ns = to_ns(f.st.st_mtim);
        const int fd =
            with_meta ? ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
        struct stat st {};
        std::string header;
        if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            read_exactly(fd, header, kCacheHeaderBytes)) {
            std::uint32_t meta_len = 0;
            std::memcpy(&meta_len, header.data() + 12, sizeof meta_len);
            if (meta_len <= info.bytes && !read_exactly(fd, info.meta, meta_len))
                info.meta.clear();
        }
        if (fd >= 0)
            ::close(fd);
        out.push_back(std::move(info));
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.mtime_ns < b.mtime_ns; });
    return out;
}

std::size_t DiskCache::clear() {
    if (!enabled_)
        throw ConfigError("cache clear refused: " + disabled_reason_ + "; nothing was removed");
    std::size_t removed = 0;
    const std::int64_t now = wall_ns();
    const std::vector<OwnFile> files = own_files(dir_);
    for (const OwnFile& f : files) // entries first: their locks go with them
        if (f.name.kind == CacheFileKind::entry && ::unlink(f.path.c_str()) == 0)
            ++removed;
    for (const OwnFile& f : files) {
        if (f.name.kind == CacheFileKind::lock)
            remove_free_lock(f.path);
        else if (temp_reclaimable(f, now))
            ::unlink(f.path.c_str());
    }
    return removed;
}

void DiskCache::evict(const Hash128& stored) {
    std::lock_guard guard(evict_mutex_);
    const std::int64_t now = wall_ns();
    std::vector<OwnFile> entries;
    std::map<std::string, OwnFile> locks; // by hex key
    std::uint64_t total = 0;
    for (OwnFile& f : own_files(dir_)) {
        if (temp_reclaimable(f, now)) {
            ::unlink(f.path.c_str()); // a writer that died
        } else if (f.name.kind == CacheFileKind::entry) {
            total += static_cast<std::uint64_t>(f.st.st_size);
            entries.push_back(std::move(f));
        } else if (f.name.kind == CacheFileKind::lock) {
            total += static_cast<std::uint64_t>(f.st.st_size);
            locks.emplace(f.name.key.hex(), std::move(f));
        }
    }
    std::sort(entries.begin(), entries.end(), [](const OwnFile& a, const OwnFile& b) {
        return to_ns(a.st.st_mtim) < to_ns(b.st.st_mtim);
    });
    std::set<std::string> kept;
    for (const OwnFile& e : entries) { // oldest use first; never the entry just stored
        if (total <= max_bytes_ || e.name.key == stored) {
            kept.insert(e.name.key.hex());
            continue;
        }
        if (::unlink(e.path.c_str()) == 0) {
            total -= static_cast<std::uint64_t>(e.st.st_size);
            ++stats_.evicted;
        } else {
            kept.insert(e.name.key.hex());
        }
    }
    // Locks go with their entries: a lock whose entry is gone goes unless a process holds it.
    for (const auto& [hex, lock] : locks) {
        std::uint64_t bytes = 0;
        if (!kept.contains(hex) && remove_free_lock(lock.path, &bytes))
            total -= bytes;
    }
}

} // namespace kjit
