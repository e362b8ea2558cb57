#pragma once

#include "jit/cache_key.hpp"
#include "jit/compile_pool.hpp"
#include "jit/disk_cache.hpp"
#include "jit/remote/remote_cache.hpp"

#include <memory>
#include <span>

namespace kjit {

/// How a CompileCache finds and fills its disk cache and compiles its misses.
struct CacheSettings {
    bool use_disk = true;           ///< false: --no-cache, every request compiles
    std::filesystem::path dir;      ///< empty: DiskCache::default_dir()
    std::uint64_t max_bytes = 0;    ///< 0: DiskCache::default_max_bytes()
    int jobs = 0;                   ///< 0: default_compile_jobs()
    std::filesystem::path worker;   ///< compile-worker executable; empty: KJIT_COMPILE_WORKER or threads
    WarningSink warn;               ///< empty: kjit's warning sink
    /// How long to wait for another process compiling the same key; nullopt:
    /// DiskCache::default_lock_wait() (KJIT_CACHE_LOCK_WAIT).
    std::optional<std::chrono::milliseconds> lock_wait;
    /// The remote tier behind the disk cache (only with use_disk); nullopt:
    /// RemoteSettings::from_flags() (KJIT_REMOTE_*); an empty url: none.
    std::optional<RemoteSettings> remote;
};

/// One compile request: a kernel of the cache's source set and its options.
struct CompileRequest {
    std::string kernel;
    CompileOptions options;
};

/// Where a specialized kernel came from.
enum class Origin { disk, remote, compiled };

/// The answer to one request.
struct Specialized {
    CacheKey key;
    std::optional<CompiledKernel> compiled; ///< empty when `error` is set
    std::exception_ptr error;
    Origin origin = Origin::compiled;
    double read_ms = 0; ///< cache lookup, read, verify (remote: its share of the round trip)
};

/// Compiles through the disk cache: hits are read and verified, misses compiled (in parallel
/// for get_all) under a per-key lock so that concurrent processes compile each key once. A key
/// another process is compiling is waited for up to the lock wait (one deadline for all such
/// keys of a call), then compiled here; a key whose entry path is foreign is compiled without
/// the cache. With a remote tier, a disk miss is looked up in the store (a verified hit is
/// written to disk), and what no host has stored is compiled under remote leases, up to `jobs`
/// keys at a time, so that hosts missing the same keys share the work and compile each once;
/// keys other hosts hold are waited for up to the lock wait since the last progress, then
/// compiled here. Every compile is written to both tiers.
class CompileCache {
  public:
    explicit CompileCache(CacheSettings settings = {});

    /// One request.
    Specialized get(const SourceSet& sources, const CompileRequest& request);
    /// Many requests: disk hits first, then every miss compiled in parallel; results in order.
    std::vector<Specialized> get_all(const SourceSet& sources,
                                     std::span<const CompileRequest> requests,
                                     const CompileProgress& progress = {});

    /// The disk cache, or nullptr with use_disk off.
    [[nodiscard]] DiskCache* disk() const { return disk_.get(); }
    /// The remote tier, or nullptr when there is none (use_disk off, no url).
    [[nodiscard]] RemoteCache* remote() const { return remote_.get(); }
    [[nodiscard]] const CacheSettings& settings() const { return settings_; }

  private:
    std::optional<CompiledKernel> load(const CacheKey& key, const CompileOptions& options,
                                       double* read_ms);
    void store(const CacheKey& key, const CompiledKernel& compiled);
    void warn(const std::string& message) const;
    CacheSettings settings_;
    std::unique_ptr<DiskCache> disk_;
    std::unique_ptr<RemoteCache> remote_;
    std::atomic<bool> remote_wait_warned_{false}, remote_gave_up_warned_{false};
};

/// The meta text stored with an entry (kernel, arch, defines, key components, log, ...).
std::string entry_meta(const CacheKey& key, const CompiledKernel& compiled);

} // namespace kjit
