#pragma once

#include "jit/hash.hpp"

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace kjit {

/// The kinds of file kjit writes in a cache directory. Each has one exact name pattern (below);
/// a name that matches none is not kjit's, and kjit never removes it.
enum class CacheFileKind { entry, lock, temp, other };

/// A file name parsed against kjit's patterns, where KEY is 32 lowercase hex digits:
/// `KEY.kjit` (an entry), `KEY.lock` (the key's lock), `KEY.kjit.tmp.HOST.PID.N` (an entry
/// being written: HOST is 8 lowercase hex digits naming the writer's host (cache_host_id), PID
/// and N are decimal without leading zeros).
struct CacheFileName {
    CacheFileKind kind = CacheFileKind::other;
    Hash128 key;
    std::uint32_t host = 0; ///< temp only
    std::uint64_t pid = 0;  ///< temp only
};

/// `name` (a file name, no directory) against the patterns; kind `other` unless one matches
/// exactly.
CacheFileName parse_cache_file_name(std::string_view name);
/// `KEY.kjit`.
std::string entry_file_name(const Hash128& key);
/// `KEY.lock`.
std::string lock_file_name(const Hash128& key);
/// `KEY.kjit.tmp.HOST.PID.N` for this host and process.
std::string temp_file_name(const Hash128& key, std::uint64_t n);
/// This host's id in temporary names: the low 32 bits of xxh3-64 of its host name.
std::uint32_t cache_host_id();
/// True when a temporary file's writer is certainly gone: it ran on this host and its pid no
/// longer exists (kill(pid, 0) fails with ESRCH).
bool temp_writer_gone(const CacheFileName& temp);

/// True when path (not followed) is a regular file owned by the current user; fills `st`.
bool owned_regular_file(const std::filesystem::path& path, struct stat* st = nullptr);
/// "a directory", "a FIFO", "a symbolic link", ... for a file that is not a regular file.
std::string file_kind_text(mode_t mode);

/// Reads exactly `size` bytes from fd into out (retrying short reads); false when fewer came.
bool read_exactly(int fd, std::string& out, std::size_t size);

/// One try at a lock file, without waiting.
struct LockAttempt {
    int fd = -1;       ///< >= 0: the lock is held through this descriptor
    bool busy = false; ///< another open file (process) holds it
    /// Why the file cannot serve as a lock ("" when held or busy), to follow "PATH is": "a
    /// FIFO", "owned by uid 1001", "a file that cannot be opened (Permission denied)".
    std::string problem;
};

/// Opens (creating, mode 0600, links not followed, never blocking) and locks the file at path
/// with flock(LOCK_EX | LOCK_NB). A lock taken on a file that was meanwhile unlinked or
/// replaced is dropped and taken again on the file now there; a lock taken writes
/// "PID HOSTNAME" into the file for lock_holder().
LockAttempt try_lock_file(const std::filesystem::path& path);
/// Who holds a lock file, as its holder wrote it: "process 1234" (this host) or "process 1234
/// on host h"; "another process" when the file names nobody.
std::string lock_holder(const std::filesystem::path& path);
/// Removes the lock file at path when it is a regular file of the current user that nobody
/// holds (locked first, so a holder's lock is never removed); its size in `bytes`.
bool remove_free_lock(const std::filesystem::path& path, std::uint64_t* bytes = nullptr);

} // namespace kjit
