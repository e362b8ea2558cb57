#pragma once

#include "core/flags.hpp"
#include "jit/cache_entry.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
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
/// kjit removes only files it wrote: names that match jit/cache_files.hpp's patterns exactly,
/// regular files owned by the current user, in a directory the cache accepted; a lock another
/// process holds is never removed. Anything else at an entry's path (a directory, a FIFO, a
/// link, another user's file) is foreign: warned about once, left alone, never opened in a
/// way that blocks, and that key is compiled without the cache.
class DiskCache {
  public:
    using Clock = std::chrono::steady_clock;
    /// KJIT_CACHE_DIR of `flags`, else $XDG_CACHE_HOME/kjit, else $HOME/.cache/kjit.
    static std::filesystem::path default_dir(const ResolvedFlags& flags = process_flags());
    /// KJIT_CACHE_MAX_BYTES of `flags` (kDefaultCacheMaxBytes unless set; the registry refuses
    /// a value under 1 MiB or one that is not a number).
    static std::uint64_t default_max_bytes(const ResolvedFlags& flags = process_flags());
    /// KJIT_CACHE_LOCK_WAIT of `flags` (default 30 s): how long a process waits for another
    /// that holds a key's lock before compiling the kernel itself; 0: it does not wait.
    static std::chrono::milliseconds
    default_lock_wait(const ResolvedFlags& flags = process_flags());

    /// Opens (creating, mode 0700) the directory. A directory that cannot be created or
    /// written, is owned by another user, or is writable by others leaves the cache disabled:
    /// one warning, and every load misses and every store is dropped.
    explicit DiskCache(std::filesystem::path dir, std::uint64_t max_bytes = default_max_bytes(),
                       WarningSink warn = {},
                       std::chrono::milliseconds lock_wait = default_lock_wait());

    [[nodiscard]] bool enabled() const { return enabled_; }
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
    [[nodiscard]] std::uint64_t max_bytes() const { return max_bytes_; }
    [[nodiscard]] std::chrono::milliseconds lock_wait() const { return lock_wait_; }
    /// Why the cache is disabled ("" when enabled).
    [[nodiscard]] const std::string& disabled_reason() const { return disabled_reason_; }

    /// The verified entry for `key`, or nullopt (miss, refused, foreign or damaged).
    std::optional<CacheEntry> load(const Hash128& key);
    /// Writes the entry (temp file + rename) and evicts past the cap; false when it was not
    /// written: it could not be (warned once per cache, nothing half-written left behind), the
    /// key's path is foreign, the payload is empty (no CUBIN is), or the entry alone is larger
    /// than the cap (warned once per cache: it is refused rather than evicting everything else
    /// and then itself).
    bool store(const CacheEntry& entry);
    /// True once a file kjit did not write was found at the key's entry path.
    [[nodiscard]] bool foreign(const Hash128& key) const;

    /// An exclusive per-key lock between processes (flock); released by the destructor.
    class Lock {
      public:
        Lock() = default;
        explicit Lock(int fd, bool busy = false) : fd_(fd), busy_(busy) {}
        Lock(Lock&& other) noexcept;
        Lock& operator=(Lock&& other) noexcept;
        Lock(const Lock&) = delete;
        Lock& operator=(const Lock&) = delete;
        ~Lock();
        [[nodiscard]] bool held() const { return fd_ >= 0; }
        /// Not held because another process holds it (not: the cache cannot lock this key).
        [[nodiscard]] bool busy() const { return busy_; }

      private:
        int fd_ = -1;
        bool busy_ = false;
    };
    /// Takes the key's lock; with `wait`, waits for another holder up to lock_wait() from now
    /// (lock_until). Unheld when the cache is disabled or the key's lock file is foreign, and
    /// busy when another process holds it (without `wait`, or past the wait).
    Lock lock(const Hash128& key, bool wait);
    /// Takes the key's lock, waiting for another holder until `deadline`. After 5 s of waiting
    /// one warning (per cache) names the holder; at the deadline one warning (per cache) says
    /// the kernel is compiled without waiting, and the Lock returned is busy.
    Lock lock_until(const Hash128& key, Clock::time_point deadline);

    /// Every entry, oldest use first; `with_meta` also reads each entry's meta text.
    [[nodiscard]] std::vector<DiskEntryInfo> list(bool with_meta = true) const;
    /// Removes every entry, every lock no process holds and every temporary file whose writer
    /// is gone (or that is an hour old); returns the number of entries removed. ConfigError
    /// (nothing removed) when the cache refused its directory.
    std::size_t clear();
    [[nodiscard]] std::filesystem::path entry_path(const Hash128& key) const;
    [[nodiscard]] std::filesystem::path lock_path(const Hash128& key) const;

    /// Counters for this object's lifetime.
    struct Stats {
        std::atomic<std::uint64_t> hits{0}, misses{0}, stores{0}, damaged{0}, evicted{0},
            foreign{0};
    };
    [[nodiscard]] const Stats& stats() const { return stats_; }

  private:
    void warn_once(std::atomic<bool>& flag, const std::string& message);
    /// Marks path foreign and warns once per path: `what` is there.
    void found_foreign(const std::filesystem::path& path, const std::string& what,
                       const std::string& consequence);
    void evict(const Hash128& stored);
    std::filesystem::path dir_;
    std::uint64_t max_bytes_;
    WarningSink warn_;
    std::chrono::milliseconds lock_wait_;
    bool enabled_ = false;
    std::string disabled_reason_;
    std::atomic<bool> write_warned_{false}, oversize_warned_{false}, wait_warned_{false},
        gave_up_warned_{false};
    mutable std::mutex foreign_mutex_;
    std::set<std::string> foreign_; ///< paths found foreign
    std::mutex evict_mutex_;
    Stats stats_;
};

} // namespace kjit
