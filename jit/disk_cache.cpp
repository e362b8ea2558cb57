#include "jit/disk_cache.hpp"

#include "core/warnings.hpp"
#include "jit/cache_files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <utility>

namespace kjit {

namespace fs = std::filesystem;

namespace {

/// How long a wait for a key's lock goes on before it names the holder.
constexpr auto kLockNotice = std::chrono::seconds(5);
constexpr const char* kWithoutCache = "this kernel is compiled without the cache";

std::string errno_text(int e) { return std::strerror(e); }

bool write_all(int fd, const std::string& bytes, int* error) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *error = errno;
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

/// Without a sink of its own, a cache reports through kjit's warning sink.
void default_warn(const std::string& message) {
    warn(message);
}

/// Creates dir and its missing parents; the directories created get mode 0700.
bool make_dirs(const fs::path& dir, std::string* why) {
    std::error_code ec;
    if (fs::is_directory(dir, ec))
        return true;
    if (dir.has_parent_path() && dir.parent_path() != dir && !make_dirs(dir.parent_path(), why))
        return false;
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        *why = "cannot create " + dir.string() + ": " + errno_text(errno);
        return false;
    }
    if (!fs::is_directory(dir, ec)) { // EEXIST: something else has the name
        *why = "cannot create " + dir.string() + ": it exists and is not a directory";
        return false;
    }
    return true;
}

} // namespace

fs::path DiskCache::default_dir(const ResolvedFlags& flags) {
    if (const std::string& d = flags.get_string(kFlagCacheDir); !d.empty())
        return d;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return fs::path(x) / "kjit";
    if (const char* h = std::getenv("HOME"); h && *h)
        return fs::path(h) / ".cache" / "kjit";
    return fs::temp_directory_path() / ("kjit-" + std::to_string(::geteuid()));
}

std::uint64_t DiskCache::default_max_bytes(const ResolvedFlags& flags) {
    return static_cast<std::uint64_t>(flags.get_int(kFlagCacheMaxBytes));
}

std::chrono::milliseconds DiskCache::default_lock_wait(const ResolvedFlags& flags) {
    return std::chrono::seconds(flags.get_int(kFlagCacheLockWait));
}

DiskCache::DiskCache(fs::path dir, std::uint64_t max_bytes, WarningSink warn,
                     std::chrono::milliseconds lock_wait)
    : dir_(std::move(dir)), max_bytes_(max_bytes), warn_(warn ? std::move(warn) : default_warn),
      lock_wait_(std::max(lock_wait, std::chrono::milliseconds(0))) {
    std::string why;
    struct stat st {};
    if (!make_dirs(dir_, &why)) {
        // why is set
    } else if (::stat(dir_.c_str(), &st) != 0) {
        why = "cannot stat " + dir_.string() + ": " + errno_text(errno);
    } else if (st.st_uid != ::geteuid()) {
        why = dir_.string() + " is owned by uid " + std::to_string(st.st_uid) + ", not by uid " +
              std::to_string(::geteuid()) + ": a CUBIN planted there would run on the GPU";
    } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        why = dir_.string() + " is writable by other users (mode " +
              [&] {
                  char m[8];
                  std::snprintf(m, sizeof m, "%03o", st.st_mode & 0777);
                  return std::string(m);
              }() +
              "): a CUBIN planted there would run on the GPU";
    } else if (::access(dir_.c_str(), W_OK | X_OK) != 0) {
        why = dir_.string() + " is not writable: " + errno_text(errno);
    }
    enabled_ = why.empty();
    if (!enabled_) {
        disabled_reason_ = why;
        warn_("disk cache disabled, compiling in memory only: " + why);
    }
}

fs::path DiskCache::entry_path(const Hash128& key) const {
    return dir_ / entry_file_name(key);
}

fs::path DiskCache::lock_path(const Hash128& key) const {
    return dir_ / lock_file_name(key);
}

void DiskCache::warn_once(std::atomic<bool>& flag, const std::string& message) {
    if (!flag.exchange(true))
        warn_(message);
}

void DiskCache::found_foreign(const fs::path& path, const std::string& what,
                              const std::string& consequence) {
    {
        std::lock_guard lock(foreign_mutex_);
        if (!foreign_.insert(path.string()).second)
            return;
    }
    ++stats_.foreign;
    warn_(path.string() + " is " + what + ", not a file kjit wrote: it is left alone and " +
          consequence);
}

bool DiskCache::foreign(const Hash128& key) const {
    std::lock_guard lock(foreign_mutex_);
    return foreign_.contains(entry_path(key).string());
}

std::optional<CacheEntry> DiskCache::load(const Hash128& key) {
    if (!enabled_)
        return std::nullopt;
    const fs::path path = entry_path(key);
    const auto miss = [&]() -> std::optional<CacheEntry> {
        ++stats_.misses;
        return std::nullopt;
    };
    if (foreign(key))
        return miss();
    // Never follow a link, never block (a FIFO opens at once and is then refused below).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        const int e = errno;
        struct stat st {};
        // A regular file of ours that cannot be opened is replaced by the next store.
        if (e != ENOENT && ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
            found_foreign(path, file_kind_text(st.st_mode), kWithoutCache);
        return miss();
    }
    struct stat st {};
    std::string bytes;
    std::string problem;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        found_foreign(path, file_kind_text(st.st_mode), kWithoutCache);
        return miss();
    }
    if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        ::close(fd);
        if (st.st_uid != ::geteuid()) {
            std::lock_guard lock(foreign_mutex_); // never replaced by a store either
            foreign_.insert(path.string());
        }
        warn_("refusing cache entry " + path.string() + ": owned by uid " +
              std::to_string(st.st_uid) + " or writable by others; it is not loaded");
        return miss();
    }
    if (!read_exactly(fd, bytes, static_cast<std::size_t>(st.st_size)))
        problem = "short read";
    ::close(fd);
    std::optional<CacheEntry> entry;
    if (problem.empty())
        entry = decode_entry(bytes, key, &problem);
    if (!entry) {
        ++stats_.damaged;
        // Only the file that was read, should another have been renamed into place since.
        struct stat now {};
        if (::lstat(path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
            ::unlink(path.c_str());
        warn_("damaged cache entry " + path.string() + " (" + problem +
              ") deleted; the kernel is compiled again");
        return miss();
    }
    ++stats_.hits;
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW); // last use, for LRU
    return entry;
}

bool DiskCache::store(const CacheEntry& entry) {
    if (!enabled_ || foreign(entry.key) || entry.payload.empty()) // no CUBIN, nothing to serve
        return false;
    const fs::path final_path = entry_path(entry.key);
    const std::string bytes = encode_entry(entry);
    if (bytes.size() > max_bytes_) {
        const std::string kernel = meta_value(entry.meta, "kernel");
        warn_once(oversize_warned_,
                  "not caching " + (kernel.empty() ? std::string("an entry") : "kernel " + kernel) +
                      ": its entry of " + std::to_string(bytes.size()) +
                      " bytes is larger than the cache's cap of " + std::to_string(max_bytes_) +
                      " bytes (KJIT_CACHE_MAX_BYTES); it is compiled again when next needed");
        return false;
    }
    thread_local std::mt19937_64 rng{std::random_device{}()};
    const fs::path tmp = dir_ / temp_file_name(entry.key, rng() >> 1);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        warn_once(write_warned_, "cannot write cache entries in " + dir_.string() + ": " +
                                     errno_text(errno) +
                                     "; compiled kernels are kept in memory only");
        return false;
    }
    int error = 0;
    const bool ok = write_all(fd, bytes, &error);
    if (::close(fd) != 0 && ok)
        error = errno;
    if (!ok || error != 0) {
        ::unlink(tmp.c_str());
        warn_once(write_warned_, "cannot write cache entry " + final_path.string() + ": " +
                                     errno_text(error) +
                                     "; compiled kernels are kept in memory only");
        return false;
    }
    // rename() replaces what is at the path: only an entry of ours, never a foreign file.
    struct stat st {};
    if (::lstat(final_path.c_str(), &st) == 0 && !owned_regular_file(final_path)) {
        ::unlink(tmp.c_str());
        found_foreign(final_path,
                      S_ISREG(st.st_mode) ? "owned by uid " + std::to_string(st.st_uid)
                                          : file_kind_text(st.st_mode),
                      kWithoutCache);
        return false;
    }
    if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        warn_once(write_warned_,
                  "cannot rename cache entry into " + final_path.string() + ": " + errno_text(e));
        return false;
    }
    ++stats_.stores;
    evict(entry.key);
    return true;
}

DiskCache::Lock::Lock(Lock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), busy_(std::exchange(other.busy_, false)) {}
DiskCache::Lock& DiskCache::Lock::operator=(Lock&& other) noexcept {
    std::swap(fd_, other.fd_);
    std::swap(busy_, other.busy_);
    return *this;
}
DiskCache::Lock::~Lock() {
    if (fd_ >= 0)
        ::close(fd_); // releases the flock
}

DiskCache::Lock DiskCache::lock(const Hash128& key, bool wait) {
    return lock_until(key, wait ? Clock::now() + lock_wait_ : Clock::time_point{});
}

DiskCache::Lock DiskCache::lock_until(const Hash128& key, Clock::time_point deadline) {
    if (!enabled_)
        return Lock{};
    const fs::path path = lock_path(key);
    const auto start = Clock::now();
    auto pause = std::chrono::milliseconds(5);
    const auto seconds = [](std::chrono::milliseconds ms) {
        char s[32];
        std::snprintf(s, sizeof s, "%g s", static_cast<double>(ms.count()) / 1000.0);
        return std::string(s);
    };
    for (;;) {
        const LockAttempt a = try_lock_file(path);
        if (a.fd >= 0)
            return Lock{a.fd};
        if (!a.busy) {
            found_foreign(path, a.problem, "this kernel is compiled without the lock");
            return Lock{};
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            if (deadline != Clock::time_point{})
                warn_once(gave_up_warned_,
                          lock_holder(path) + " still holds the lock " + path.string() +
                              " after " + seconds(lock_wait_) +
                              " (KJIT_CACHE_LOCK_WAIT): the kernel is compiled here without "
                              "waiting for it");
            return Lock{-1, true};
        }
        if (now - start >= kLockNotice)
            warn_once(wait_warned_, "waiting for " + lock_holder(path) + ", which holds the lock " +
                                        path.string() + " (compiling that kernel); after " +
                                        seconds(lock_wait_) +
                                        " (KJIT_CACHE_LOCK_WAIT) it is compiled here instead");
        std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
        pause = std::min(pause * 2, std::chrono::milliseconds(100));
    }
}

} // namespace kjit
