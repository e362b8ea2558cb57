#include "jit/disk_cache.hpp"

#include "core/warnings.hpp"

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
#include <random>
#include <utility>

namespace kjit {

namespace fs = std::filesystem;

namespace {

constexpr const char* kEntrySuffix = ".kjit";
constexpr const char* kLockSuffix = ".lock";
constexpr const char* kTempMarker = ".tmp.";

std::string errno_text(int e) { return std::strerror(e); }

std::int64_t to_ns(const struct timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

/// Reads a whole file from an open descriptor.
bool read_all(int fd, std::string& out, std::size_t size) {
    out.resize(size);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::read(fd, out.data() + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += static_cast<std::size_t>(n);
    }
    out.resize(done);
    return done == size;
}

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

DiskCache::DiskCache(fs::path dir, std::uint64_t max_bytes, WarningSink warn)
    : dir_(std::move(dir)), max_bytes_(max_bytes), warn_(warn ? std::move(warn) : default_warn) {
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
    return dir_ / (key.hex() + kEntrySuffix);
}

void DiskCache::warn_once(const std::string& message) {
    if (!write_warned_.exchange(true))
        warn_(message);
}

std::optional<CacheEntry> DiskCache::load(const Hash128& key) {
    if (!enabled_)
        return std::nullopt;
    const fs::path path = entry_path(key);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        ++stats_.misses;
        return std::nullopt;
    }
    struct stat st {};
    std::string bytes;
    std::string problem;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        problem = "not a regular file";
    } else if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        ::close(fd);
        ++stats_.misses;
        warn_("refusing cache entry " + path.string() + ": owned by uid " +
              std::to_string(st.st_uid) + " or writable by others; it is not loaded");
        return std::nullopt;
    } else if (!read_all(fd, bytes, static_cast<std::size_t>(st.st_size))) {
        problem = "short read";
    }
    ::close(fd);
    std::optional<CacheEntry> entry;
    if (problem.empty())
        entry = decode_entry(bytes, key, &problem);
    if (!entry) {
        ++stats_.damaged;
        ++stats_.misses;
        std::error_code ec;
        fs::remove(path, ec);
        warn_("damaged cache entry " + path.string() + " (" + problem +
              ") deleted; the kernel is compiled again");
        return std::nullopt;
    }
    ++stats_.hits;
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // last use, for LRU eviction
    return entry;
}

bool DiskCache::store(const CacheEntry& entry) {
    if (!enabled_)
        return false;
    const fs::path final_path = entry_path(entry.key);
    thread_local std::mt19937_64 rng{std::random_device{}()};
    const fs::path tmp = dir_ / (entry.key.hex() + kTempMarker + std::to_string(::getpid()) + "." +
                                 std::to_string(rng()));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        warn_once("cannot write cache entries in " + dir_.string() + ": " + errno_text(errno) +
                  "; compiled kernels are kept in memory only");
        return false;
    }
    int error = 0;
    const bool ok = write_all(fd, encode_entry(entry), &error);
    if (::close(fd) != 0 && ok)
        error = errno;
    if (!ok || error != 0) {
        ::unlink(tmp.c_str());
        warn_once("cannot write cache entry " + final_path.string() + ": " + errno_text(error) +
                  "; compiled kernels are kept in memory only");
        return false;
    }
    if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        warn_once("cannot rename cache entry into " + final_path.string() + ": " + errno_text(e));
        return false;
    }
    ++stats_.stores;
    evict();
    return true;
}

DiskCache::Lock::Lock(Lock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
DiskCache::Lock& DiskCache::Lock::operator=(Lock&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
}
DiskCache::Lock::~Lock() {
    if (fd_ >= 0)
        ::close(fd_); // releases the flock
}

DiskCache::Lock DiskCache::lock(const Hash128& key, bool wait) {
    if (!enabled_)
        return Lock{};
    const fs::path path = dir_ / (key.hex() + kLockSuffix);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return Lock{};
    int r;
    do {
        r = ::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
        ::close(fd);
        return Lock{};
    }
    return Lock{fd};
}

std::vector<DiskEntryInfo> DiskCache::list(bool with_meta) const {
    std::vector<DiskEntryInfo> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() != 32 + std::strlen(kEntrySuffix) || !name.ends_with(kEntrySuffix))
            continue;
        const auto key = Hash128::parse(std::string_view(name).substr(0, 32));
        struct stat st {};
        if (!key || ::lstat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        DiskEntryInfo info;
        info.key = *key;
        info.bytes = static_cast<std::uint64_t>(st.st_size);
        info.mtime_ns = to_ns(st.st_mtim);
        if (FILE* f = with_meta ? std::fopen(e.path().c_str(), "rb") : nullptr) {
            char header[kCacheHeaderBytes];
            if (std::fread(header, 1, sizeof header, f) == sizeof header) {
                std::uint32_t meta_len = 0;
                std::memcpy(&meta_len, header + 12, sizeof meta_len);
                if (meta_len <= info.bytes) {
                    info.meta.resize(meta_len);
                    info.meta.resize(std::fread(info.meta.data(), 1, meta_len, f));
                }
            }
            std::fclose(f);
        }
        out.push_back(std::move(info));
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.mtime_ns < b.mtime_ns; });
    return out;
}

std::size_t DiskCache::clear() {
    std::size_t removed = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
        const std::string name = e.path().filename().string();
        const bool entry = name.ends_with(kEntrySuffix);
        if (entry || name.ends_with(kLockSuffix) || name.find(kTempMarker) != std::string::npos) {
            std::error_code rec;
            if (fs::remove(e.path(), rec) && entry)
                ++removed;
        }
    }
    return removed;
}

void DiskCache::evict() {
    std::lock_guard guard(evict_mutex_);
    std::vector<DiskEntryInfo> entries = list(false);
    std::uint64_t total = 0;
    for (const auto& e : entries)
        total += e.bytes;
    for (const auto& e : entries) { // oldest use first
        if (total <= max_bytes_)
            break;
        std::error_code ec;
        if (fs::remove(entry_path(e.key), ec)) {
            total -= e.bytes;
            ++stats_.evicted;
        }
    }
    // Temporary files of writers that died more than an hour ago.
    const auto cutoff = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count() -
                        3600LL * 1000000000LL;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
        struct stat st {};
        if (e.path().filename().string().find(kTempMarker) != std::string::npos &&
            ::lstat(e.path().c_str(), &st) == 0 && to_ns(st.st_mtim) < cutoff)
            ::unlink(e.path().c_str());
    }
}

} // namespace kjit
