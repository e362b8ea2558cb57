// Remote-tier benchmark: per kernel, a remote hit (GET + verify the signature and checksums +
// write to disk) against a disk hit (read + verify) and a cold compile, in one run, on the
// same distinct rms_norm specializations. bench/run_remote.sh starts the redis-server.
// Usage: bench_remote --redis URL --secret FILE [--variants N]
#include "bench/bench_support.hpp"
#include "jit/compile_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace kjit;
namespace fs = std::filesystem;
using namespace kjit::bench;

namespace {

// RMS_BLOCK of the i-th variant: 32 .. 1024.
int block_of(int i) { return 32 << (i % 6); }

CacheSettings settings(const fs::path& dir, const RemoteSettings& remote) {
    CacheSettings s;
    s.dir = dir;
    s.jobs = 1;
    s.remote = remote;
    return s;
}

/// Per-kernel ms of one get_all over every request; each must come from `want`.
double batched_ms(const Variants& v, const CacheSettings& s, Origin want) {
    CompileCache batch(s);
    const auto t = Clock::now();
    for (const auto& r : batch.get_all(v.sources, v.requests))
        if (!r.compiled || r.origin != want) {
            std::fprintf(stderr, "bench_remote: a request did not come from where expected\n");
            std::exit(1);
        }
    return ms_since(t) / static_cast<double>(v.requests.size());
}

} // namespace

int main(int argc, char** argv) {
    int n = 32;
    RemoteSettings remote;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--variants")
            n = std::atoi(argv[i + 1]);
        else if (a == "--redis")
            remote.url = argv[i + 1];
        else if (a == "--secret")
            remote.secret = argv[i + 1];
    }
    if (remote.url.empty() || remote.secret.empty()) {
        std::fprintf(stderr, "usage: bench_remote --redis URL --secret FILE [--variants N]\n");
        return 2;
    }
    remote.timeout = std::chrono::milliseconds(5000);
    const Variants v = variants(SourceSet::embedded(), n, block_of);
    std::printf("kjit bench_remote: %d distinct rms_norm specializations, %ld cores, NVRTC %d, "
                "store %s\n",
                n, ::sysconf(_SC_NPROCESSORS_ONLN), nvrtc_version(), remote.url.c_str());

    // Cold: compiled one at a time, written to disk and (signed) to the store.
    TempDir cold_dir;
    CompileCache cold(settings(cold_dir.dir, remote));
    std::vector<double> cold_ms;
    std::uint64_t entry_bytes = 0;
    for (const auto& r : v.requests) {
        const auto t = Clock::now();
        const Specialized s = cold.get(v.sources, r);
        cold_ms.push_back(ms_since(t));
        if (!s.compiled || s.origin != Origin::compiled)
            return 1;
        entry_bytes += encode_remote_entry({s.key.hash, entry_meta(s.key, *s.compiled),
                                            s.compiled->cubin},
                                           nullptr)
                           .size();
    }

    // Then, alternated five times: disk hits (the cold run's directory), remote hits one
    // request at a time (a fresh directory each: GET, verify, write to disk), and remote hits
    // of all requests in one call (one pipelined round trip).
    std::vector<double> disk, remote_one, remote_all;
    for (int rep = 0; rep < 5; ++rep) {
        CompileCache d(settings(cold_dir.dir, remote));
        auto t = Clock::now();
        for (const auto& r : v.requests)
            if (d.get(v.sources, r).origin != Origin::disk)
                return 1;
        disk.push_back(ms_since(t) / n);
        TempDir one_dir;
        CompileCache one(settings(one_dir.dir, remote));
        t = Clock::now();
        for (const auto& r : v.requests)
            if (one.get(v.sources, r).origin != Origin::remote)
                return 1;
        remote_one.push_back(ms_since(t) / n);
        TempDir all_dir;
        remote_all.push_back(batched_ms(v, settings(all_dir.dir, remote), Origin::remote));
    }
    const double c = median(cold_ms);
    std::printf("cold compile        per kernel %.1f ms (median of %d)\n", c, n);
    std::printf("disk hit            per kernel %.3f ms (median of 5 rounds)\n", median(disk));
    std::printf("remote hit, single  per kernel %.3f ms -> %.0fx faster than cold, %.1fx a disk "
                "hit\n",
                median(remote_one), c / median(remote_one), median(remote_one) / median(disk));
    std::printf("remote hit, batched per kernel %.3f ms -> %.0fx faster than cold, %.1fx a disk "
                "hit (%d requests, one round trip)\n",
                median(remote_all), c / median(remote_all), median(remote_all) / median(disk), n);
    std::printf("entry size          %.1f KiB per kernel on the wire\n",
                static_cast<double>(entry_bytes) / n / 1024.0);
    return 0;
}
