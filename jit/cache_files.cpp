#include "jit/cache_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

namespace kjit {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kEntrySuffix = ".kjit";
constexpr std::string_view kLockSuffix = ".lock";
constexpr std::string_view kTempInfix = ".kjit.tmp.";

bool lower_hex(std::string_view s) {
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

/// A decimal number as the writer spells it: digits, no leading zero, at most `max_digits`.
bool canonical_decimal(std::string_view s, std::size_t max_digits, std::uint64_t* value) {
    if (s.empty() || s.size() > max_digits || (s.size() > 1 && s[0] == '0'))
        return false;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    *value = v;
    return true;
}

std::string host_name() {
    char name[HOST_NAME_MAX + 1] = {};
    if (::gethostname(name, sizeof name - 1) != 0)
        return {};
    return name;
}

std::string hex32(std::uint32_t v) {
    char s[9];
    std::snprintf(s, sizeof s, "%08x", v);
    return s;
}

} // namespace

CacheFileName parse_cache_file_name(std::string_view name) {
    CacheFileName out;
    if (name.size() < 32 || !lower_hex(name.substr(0, 32)))
        return out;
    const auto key = Hash128::parse(name.substr(0, 32));
    if (!key)
        return out;
    const std::string_view rest = name.substr(32);
    if (rest == kEntrySuffix) {
        out.kind = CacheFileKind::entry;
    } else if (rest == kLockSuffix) {
        out.kind = CacheFileKind::lock;
    } else if (rest.starts_with(kTempInfix)) {
        // HOST.PID.N
        const std::string_view tail = rest.substr(kTempInfix.size());
        if (tail.size() < 12 || !lower_hex(tail.substr(0, 8)) || tail[8] != '.')
            return out;
        const std::string_view numbers = tail.substr(9);
        const auto dot = numbers.find('.');
        std::uint64_t n = 0;
        if (dot == std::string_view::npos ||
            !canonical_decimal(numbers.substr(0, dot), 10, &out.pid) || out.pid == 0 ||
            out.pid > INT_MAX || !canonical_decimal(numbers.substr(dot + 1), 20, &n))
            return out;
        out.host =
            static_cast<std::uint32_t>(std::stoul(std::string(tail.substr(0, 8)), nullptr, 16));
        out.kind = CacheFileKind::temp;
    } else {
        return out;
    }
    out.key = *key;
    return out;
}

std::string entry_file_name(const Hash128& key) {
    return key.hex() + std::string(kEntrySuffix);
}

std::string lock_file_name(const Hash128& key) {
    return key.hex() + std::string(kLockSuffix);
}

std::string temp_file_name(const Hash128& key, std::uint64_t n) {
    return key.hex() + std::string(kTempInfix) + hex32(cache_host_id()) + "." +
           std::to_string(::getpid()) + "." + std::to_string(n);
}

std::uint32_t cache_host_id() {
    static const std::uint32_t id = static_cast<std::uint32_t>(hash64(host_name()));
    return id;
}

bool temp_writer_gone(const CacheFileName& temp) {
    return temp.kind == CacheFileKind::temp && temp.host == cache_host_id() &&
           ::kill(static_cast<pid_t>(temp.pid), 0) != 0 && errno == ESRCH;
}

bool read_exactly(int fd, std::string& out, std::size_t size) {
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

bool owned_regular_file(const fs::path& path, struct stat* st) {
    struct stat local {};
    struct stat* s = st ? st : &local;
    return ::lstat(path.c_str(), s) == 0 && S_ISREG(s->st_mode) && s->st_uid == ::geteuid();
}

std::string file_kind_text(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISLNK(mode))
        return "a symbolic link";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    return S_ISREG(mode) ? "a regular file" : "not a regular file";
}

LockAttempt try_lock_file(const fs::path& path) {
    for (;;) {
        LockAttempt out;
        const int fd =
            ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (fd < 0) {
            const int e = errno;
            struct stat st {};
            out.problem =
                ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)
                    ? file_kind_text(st.st_mode)
                    : "a file that cannot be opened (" + std::string(std::strerror(e)) + ")";
            return out;
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
            out.problem = !S_ISREG(st.st_mode) ? file_kind_text(st.st_mode)
                                               : "owned by uid " + std::to_string(st.st_uid);
            ::close(fd);
            return out;
        }
        int r;
        do {
            r = ::flock(fd, LOCK_EX | LOCK_NB);
        } while (r != 0 && errno == EINTR);
        if (r != 0) {
            const int e = errno;
            ::close(fd);
            if (e == EWOULDBLOCK) {
                out.busy = true;
            } else {
                out.problem =
                    "a file that cannot be locked (" + std::string(std::strerror(e)) + ")";
            }
            return out;
        }
        // Whoever removes a lock file holds its lock while unlinking it: a lock on a file that
        // is no longer at path guards nothing, so take the one there now.
        struct stat now {};
        if (::lstat(path.c_str(), &now) != 0 || now.st_dev != st.st_dev ||
            now.st_ino != st.st_ino) {
            ::close(fd);
            continue;
        }
        const std::string holder = std::to_string(::getpid()) + " " + host_name() + "\n";
        if (::ftruncate(fd, 0) == 0)
            (void)!::pwrite(fd, holder.data(), holder.size(), 0);
        out.fd = fd;
        return out;
    }
}

std::string lock_holder(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return "another process";
    char buf[512] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    std::uint64_t pid = 0;
    const std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    const auto space = text.find(' ');
    const auto end = text.find('\n');
    if (space == std::string::npos || end == std::string::npos || end < space ||
        !canonical_decimal(std::string_view(text).substr(0, space), 10, &pid))
        return "another process";
    const std::string host = text.substr(space + 1, end - space - 1);
    return "process " + std::to_string(pid) + (host == host_name() ? "" : " on host " + host);
}

bool remove_free_lock(const fs::path& path, std::uint64_t* bytes) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return false;
    struct stat st {};
    bool removed = false;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
        ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        struct stat now {};
        if (::lstat(path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
            removed = ::unlink(path.c_str()) == 0;
    }
    ::close(fd);
    if (removed && bytes)
        *bytes = static_cast<std::uint64_t>(st.st_size);
    return removed;
}

} // namespace kjit
