// Compile-cache benchmarks: memory hit, entry read + verify, disk hit against a bare
// cuModuleLoadData, warm start against a cold serial compile, and parallel cold compiles
// (worker processes and threads) against serial. Each ratio comes from one run.
// Usage: bench_cache [--variants N] [--jobs N]   (GPU parts are skipped without a device)
#include "bench/bench_support.hpp"
#include "jit/compile_cache.hpp"
#include "runtime/engine.hpp"

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

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[static_cast<std::size_t>(p * (v.size() - 1))];
}

// RMS_BLOCK of the i-th variant: 32 .. 1024.
int block_of(int i) { return 32 * (1 + i % 32); }

double compile_wall_ms(const Variants& v, const fs::path& cache_dir, bool use_disk, int jobs, const fs::path& worker) {
    CacheSettings s;
    s.dir = cache_dir;
    s.use_disk = use_disk;
    s.jobs = jobs;
    s.worker = worker;
    CompileCache cache(s);
    const auto t = Clock::now();
    const auto results = cache.get_all(v.sources, v.requests);
    const double ms = ms_since(t);
    for (const auto& r : results)
        if (!r.compiled) {
            std::fprintf(stderr, "bench: a compile failed\n");
            std::exit(1);
        }
    return ms;
}

} // namespace

int main(int argc, char** argv) {
    int n = 64;
    int jobs = default_compile_jobs();
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--variants")
            n = std::atoi(argv[i + 1]);
        else if (a == "--jobs")
            jobs = std::atoi(argv[i + 1]);
    }
    std::error_code ec;
    const fs::path worker = fs::canonical(fs::path(argv[0]).parent_path() / ".." / "tools" / "kjit", ec);
    const SourceSet src = SourceSet::embedded();
    std::printf("kjit bench_cache: %d variants of rms_norm, %d jobs, %ld cores, NVRTC %d, worker %s\n",
                n, jobs, ::sysconf(_SC_NPROCESSORS_ONLN), nvrtc_version(),
                worker.empty() ? "(none)" : worker.c_str());

    // 1. Entry read + verify, CPU only: a ~20 KB entry.
    {
        TempDir tc;
        DiskCache disk(tc.dir);
        CacheSettings s;
        s.dir = tc.dir;
        CompileCache cache(s);
        const Variants one = variants(src, 1, block_of);
        const auto r = cache.get(one.sources, one.requests[0]);
        std::vector<double> us;
        for (int i = 0; i < 2000; ++i) {
            const auto t = Clock::now();
            const auto e = disk.load(r.key.hash);
            us.push_back(ms_since(t) * 1000);
            if (!e)
                return 1;
        }
        std::printf("entry read+verify   %zu B entry: median %.2f us, p90 %.2f us (target <= 20 us)\n",
                    encode_entry({r.key.hash, entry_meta(r.key, *r.compiled), r.compiled->cubin}).size(),
                    median(us), percentile(us, 0.9));
    }

    // 2. Cold compiles: serial in-process, parallel worker processes, parallel threads, and
    // the warm start (every request a disk hit) of the same requests. Each arm has its own
    // salt: nothing it compiles was compiled before.
    double serial = 0;
    {
        TempDir tc;
        const Variants cold = variants(src, n, block_of);
        serial = compile_wall_ms(cold, tc.dir, true, 1, {});
        std::vector<double> warm;
        for (int i = 0; i < 5; ++i)
            warm.push_back(compile_wall_ms(cold, tc.dir, true, jobs, worker));
        const double w = median(warm);
        std::printf("cold serial         %d compiles: %.1f ms (%.1f ms each)\n", n, serial, serial / n);
        std::printf("warm start          %d disk hits: %.2f ms median of 5 -> %.0fx faster than cold serial (target >= 500x, CPU side; GPU load below)\n",
                    n, w, serial / w);
        const double procs = compile_wall_ms(variants(src, n, block_of), tc.dir, false, jobs, worker);
        const double threads = compile_wall_ms(variants(src, n, block_of), tc.dir, false, jobs, {});
        std::printf("cold parallel       %d compiles on %d worker processes: %.1f ms -> %.2fx serial (target >= %.1fx = 0.7 * %d)\n",
                    n, jobs, procs, serial / procs, 0.7 * jobs, jobs);
        std::printf("cold parallel       %d compiles on %d threads of one process: %.1f ms -> %.2fx serial\n",
                    n, jobs, threads, serial / threads);
    }

    std::string reason;
    if (!device_available(&reason)) {
        std::printf("GPU parts skipped: %s\n", reason.c_str());
        return 0;
    }
    const Context ctx(Device::get(0));
    std::printf("device              %s\n", ctx.device().name().c_str());

    // 3. Disk hit through a new Engine (read + verify + load + entry points) against a bare
    // cuModuleLoadData of the same CUBIN, alternated A B B A.
    {
        TempDir tc;
        std::vector<KernelSpec> specs;
        for (int i = 0; i < std::min(n, 16); ++i)
            specs.push_back({"k" + std::to_string(i), "rms_norm",
                             {{"RMS_BLOCK", std::to_string(64 * (1 + i))}}});
        EngineOptions eo;
        eo.cache.dir = tc.dir;
        eo.cache.worker = worker;
        Engine(&ctx, eo, SourceProvider()).prepare({}, specs); // fill the disk cache
        CacheSettings s;
        s.dir = tc.dir;
        std::vector<CompileRequest> same;
        for (const auto& spec : specs) {
            CompileRequest r{"rms_norm", {}};
            r.options.arch = ctx.device().arch();
            r.options.defines = spec.defines;
            same.push_back(std::move(r));
        }
        std::vector<std::string> cubins;
        for (const auto& r : CompileCache(s).get_all(src, same)) {
            if (r.origin != Origin::disk)
                std::exit(1);
            cubins.push_back(r.compiled->cubin);
        }
        std::vector<double> bare, hit;
        const auto run_bare = [&] {
            const auto t = Clock::now();
            for (const auto& c : cubins)
                Module::load(ctx, c, "bare");
            bare.push_back(ms_since(t) / cubins.size());
        };
        const auto run_hit = [&] {
            Engine e(&ctx, eo, SourceProvider());
            const auto t = Clock::now();
            const auto rows = e.prepare({}, specs);
            hit.push_back(ms_since(t) / specs.size());
            for (const auto& r : rows)
                if (r.origin != Prepared::disk)
                    std::exit(1);
        };
        for (int rep = 0; rep < 5; ++rep) {
            run_bare();
            run_hit();
            run_hit();
            run_bare();
        }
        std::printf("disk hit            per kernel %.3f ms vs bare cuModuleLoadData %.3f ms -> %.2fx (target <= 3x; ABBA x5, medians)\n",
                    median(hit), median(bare), median(hit) / median(bare));
        std::printf("warm start on GPU   %zu kernels: %.2f ms; cold serial estimate for the same %zu: %.1f ms -> %.0fx\n",
                    specs.size(), median(hit) * specs.size(), specs.size(),
                    serial / n * specs.size(), serial / n / median(hit));
    }

    // 4. Memory hit: Engine::function on a prepared kernel.
    {
        TempDir tc;
        EngineOptions eo;
        eo.cache.dir = tc.dir;
        Engine e(&ctx, eo, SourceProvider());
        e.prepare({}, std::vector<KernelSpec>{{"rms_norm", "rms_norm", {}}});
        std::vector<double> ns;
        constexpr int kBatch = 1000;
        for (int rep = 0; rep < 200; ++rep) {
            const auto t = Clock::now();
            for (int i = 0; i < kBatch; ++i) {
                const Function& f = e.function("rms_norm", "rms_norm_f32");
                asm volatile("" : : "r"(&f) : "memory");
            }
            ns.push_back(ms_since(t) * 1e6 / kBatch);
        }
        std::printf("memory hit          Engine::function: median %.1f ns, p90 %.1f ns per request (target <= 200 ns)\n",
                    median(ns), percentile(ns, 0.9));
    }
    return 0;
}
