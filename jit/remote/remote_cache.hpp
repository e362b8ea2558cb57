#pragma once
// The remote tier of the compile cache: entries on a Redis server shared by many hosts, each
// signed (jit/remote/remote_entry.hpp), and a lease per key so that hosts missing the same
// key compile it once.

#include "core/flags.hpp"
#include "jit/disk_cache.hpp"
#include "jit/remote/redis_client.hpp"
#include "jit/remote/remote_entry.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace kjit {

/// Where the remote tier is and how it is used; from_flags() reads the KJIT_REMOTE_* flags.
struct RemoteSettings {
    std::string url;                 ///< redis://...; empty: no remote tier
    std::string prefix = "kjit";     ///< keys are PREFIX:e:KEY (entries), PREFIX:l:KEY (leases)
    std::filesystem::path secret;    ///< the signing secret's file; empty: none
    bool allow_unsigned = false;     ///< without a secret, use the store unsigned
    std::chrono::milliseconds timeout{500}; ///< to connect, and for each answer
    std::chrono::milliseconds lease{10000}; ///< a lease's life unless renewed
    /// KJIT_REMOTE_CACHE, _PREFIX, _SECRET, _UNSIGNED, _TIMEOUT_MS and _LEASE_MS of `flags`.
    static RemoteSettings from_flags(const ResolvedFlags& flags = process_flags());
};

/// One stored entry as listed: key, size, seconds since its last use (-1: unknown) and its
/// meta text, read without verifying (for display only; nothing listed is served).
struct RemoteEntryInfo {
    Hash128 key;
    std::uint64_t bytes = 0;
    std::int64_t idle_s = -1;
    std::string meta;
};

/// One key's answer from the store.
struct RemoteLookup {
    std::optional<CacheEntry> entry; ///< a verified entry (a hit)
    bool refused = false;            ///< an entry was there and did not verify (reported)
};

/// The remote tier. Configuration errors are errors: a malformed URL or prefix, a secret file
/// that is missing, not the user's, or readable by others (ConfigError from the constructor).
/// Everything about the store itself degrades: a store that cannot be reached, stops
/// answering within the timeout or closes the connection turns the tier off for this object
/// with one warning (the disk cache goes on alone); a full store (maxmemory) or one that
/// refuses writes stops writes and leases with one warning; reads go on. An entry that does
/// not verify is refused and reported (once per key), never served. Without a secret the
/// tier is off with one warning unless `allow_unsigned`. Thread-safe; connects at first use.
class RemoteCache {
  public:
    explicit RemoteCache(RemoteSettings settings, WarningSink warn = {});
    /// Stops renewing and releases every lease still held.
    ~RemoteCache();
    RemoteCache(const RemoteCache&) = delete;
    RemoteCache& operator=(const RemoteCache&) = delete;

    /// Connects now unless connected or off; false when the tier is off (disabled_reason()).
    bool connect();
    /// False once the tier is off (not configured, no secret, no hiredis, the store failed).
    [[nodiscard]] bool enabled() const { return enabled_; }
    /// Why the tier is off ("" while it is on).
    [[nodiscard]] std::string disabled_reason() const;
    /// `redis://host:port/db prefix P`, for messages.
    [[nodiscard]] const std::string& describe() const { return describe_; }
    /// How entries are signed: "HMAC-SHA-256 with the secret in FILE" or "unsigned (...)".
    [[nodiscard]] std::string signing() const;
    [[nodiscard]] const RemoteSettings& settings() const { return settings_; }

    /// The entries of `keys`, verified, in one round trip; misses and refused entries empty.
    std::vector<RemoteLookup> load(std::span<const Hash128> keys);
    /// Writes the entries (signed); the number written (0 when off, full or read-only).
    std::size_t store(std::span<const CacheEntry> entries);

    /// Takes the leases of up to `max` of `keys` that no one holds, in order (SET NX with the
    /// lease's expiry, renewed while held); the indices taken. nullopt when leases cannot be
    /// taken at all (the tier is off, or the store is full): compile without one.
    std::optional<std::vector<std::size_t>> claim(std::span<const Hash128> keys, std::size_t max);
    /// Releases the leases of `keys` this object holds.
    void release(std::span<const Hash128> keys);
    /// Who holds the lease of `key`: "process 123 on host h" ("" when no one does or unknown).
    std::string lease_holder(const Hash128& key);

    /// Every stored entry, unverified (see RemoteEntryInfo); empty when off.
    std::vector<RemoteEntryInfo> list(bool with_meta = true);
    /// The server's version, memory use, maxmemory and eviction policy, one line.
    std::string server_text();

    /// Counters for this object's lifetime.
    struct Stats {
        std::atomic<std::uint64_t> hits{0}, misses{0}, refused{0}, stores{0}, bytes_read{0},
            bytes_written{0}, leases{0};
    };
    [[nodiscard]] const Stats& stats() const { return stats_; }

  private:
    /// Runs `commands` on the connection (connecting first); nullopt once the tier is off
    /// (a failure turns it off with one warning).
    std::optional<std::vector<RedisReply>>
    run(const std::vector<std::vector<std::string>>& commands);
    void turn_off(const std::string& why);
    void stop_writes(const std::string& why);
    void renew_leases();
    [[nodiscard]] std::string entry_key(const Hash128& key) const;
    [[nodiscard]] std::string lease_key(const Hash128& key) const;

    RemoteSettings settings_;
    WarningSink warn_;
    std::unique_ptr<RedisAddress> address_;
    std::optional<SigningKey> key_;
    std::string describe_;
    std::string token_; ///< this object's lease value: "PID@HOST/RANDOM"
    std::atomic<bool> enabled_{false}, writable_{true};

    mutable std::mutex mutex_; ///< the connection, the reason, refused_ and held_
    std::unique_ptr<RedisClient> client_;
    std::string disabled_reason_;
    std::set<std::string> refused_; ///< keys already reported
    std::set<std::string> held_;    ///< lease keys held

    std::mutex keeper_mutex_;
    std::condition_variable keeper_wake_;
    bool keeper_stop_ = false;
    std::thread keeper_; ///< renews held leases every lease/3
    Stats stats_;
};

} // namespace kjit
