#pragma once

#include "core/flags.hpp"
#include "jit/cache_entry.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kjit {

/// Receives one cache's warnings instead of kjit's warning sink (core/warnings.hpp).
using WarningSink = std::function<void(const std::string&)>;

/// The default cap on the disk cache's size: 1 GiB.
inline constexpr std::uint64_t kDefaultCacheMaxBytes = 1ull << 30;

/// One entry file, as listed by DiskCache::list().
struct DiskEntryInfo {
    Hash128 key;
    std::uint64_t bytes = 0;
    std::int64_t mtime_ns = 0; ///< last use (a hit touches it)
    std::string meta;          ///< empty when the header could not be read
};

/// CUBIN entries on disk, one file per key, in a directory only the current user can write.
/// Entries are verified on every load (a damaged one is deleted and reported, never served),
/// written to a temporary file and renamed, and guarded by a per-key lock so concurrent
/// processes compile a key once. The directory is capped with least-recently-used eviction.
class DiskCache {
  public:
    /// KJIT_CACHE_DIR of `flags`, else $XDG_CACHE_HOME/kjit, else $HOME/.cache/kjit.
    static std::filesystem::path default_dir(const ResolvedFlags& flags = process_flags());
    /// KJIT_CACHE_MAX_BYTES of `flags` (kDefaultCacheMaxBytes unless set; the registry refuses
    /// a value under 1 MiB or one that is not a number).
    static std::uint64_t default_max_bytes(const ResolvedFlags& flags = process_flags());

    /// Opens (creating, mode 0700) the directory. A directory that cannot be created or
    /// written, is owned by another user, or is writable by others leaves the cache disabled:
    /// one warning, and every load misses and every store is dropped.
    explicit DiskCache(std::filesystem::path dir, std::uint64_t max_bytes = default_max_bytes(),
                       WarningSink warn = {});

    [[nodiscard]] bool enabled() const { return enabled_; }
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
    [[nodiscard]] std::uint64_t max_bytes() const { return max_bytes_; }
    /// Why the cache is disabled ("" when enabled).
    [[nodiscard]] const std::string& disabled_reason() const { return disabled_reason_; }

    /// The verified entry for `key`, or nullopt (miss, refused or damaged).
    std::optional<CacheEntry> load(const Hash128& key);
    /// Writes the entry (temp file + rename) and evicts past the cap; false when it could
    /// not be written (warned once per cache, nothing half-written left behind).
    bool store(const CacheEntry& entry);

    /// An exclusive per-key lock between processes (flock); released by the destructor.
    class Lock {
      public:
        Lock() = default;
        explicit Lock(int fd) : fd_(fd) {}
        Lock(Lock&& other) noexcept;
        Lock& operator=(Lock&& other) noexcept;
        Lock(const Lock&) = delete;
        Lock& operator=(const Lock&) = delete;
        ~Lock();
        [[nodiscard]] bool held() const { return fd_ >= 0; }

      private:
        int fd_ = -1;
    };
    /// Takes the key's lock, waiting for another holder when `wait`; an unheld Lock when the
    /// cache is disabled or (without `wait`) someone else holds it.
    Lock lock(const Hash128& key, bool wait);

    /// Every entry, oldest use first; `with_meta` also reads each entry's meta text.
    [[nodiscard]] std::vector<DiskEntryInfo> list(bool with_meta = true) const;
    /// Removes every entry, lock and temporary file; returns the number of entries removed.
    std::size_t clear();
    [[nodiscard]] std::filesystem::path entry_path(const Hash128& key) const;

    /// Counters for this object's lifetime.
    struct Stats {
        std::atomic<std::uint64_t> hits{0}, misses{0}, stores{0}, damaged{0}, evicted{0};
    };
    [[nodiscard]] const Stats& stats() const { return stats_; }

  private:
    void warn_once(const std::string& message);
    void evict();
    std::filesystem::path dir_;
    std::uint64_t max_bytes_;
    WarningSink warn_;
    bool enabled_ = false;
    std::string disabled_reason_;
    std::atomic<bool> write_warned_{false};
    std::mutex evict_mutex_;
    Stats stats_;
};

} // namespace kjit
