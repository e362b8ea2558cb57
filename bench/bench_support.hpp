#pragma once
// What the benchmarks share: timing, a median and a spread, a scratch directory, compile
// requests no cache has seen (bench_cache, bench_remote) and a one-file kernel loaded
// (bench_launch, bench_plan).
#include "jit/compile_cache.hpp"
#include "jit/compiler.hpp"
#include "runtime/context.hpp"
#include "runtime/module.hpp"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

namespace kjit::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

/// The upper median (the middle element of an odd count).
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

/// (max - min) / median: how far the samples a median comes from stray.
inline double spread(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : (v.back() - v.front()) / v[v.size() / 2];
}

/// `source`, one file of kernels, compiled for `ctx`'s device and loaded as module `name`.
inline Module load_source(const Context& ctx, const std::string& name, const std::string& source) {
    SourceSet set;
    set.add({name + ".cu", "bench/" + name + ".cu", source, hash128(source), 0});
    CompileOptions o;
    o.arch = ctx.device().arch();
    return Module::load(ctx, compile(set, name, o).cubin, name);
}

/// A fresh directory under the temp directory, removed with everything in it.
struct TempDir {
    std::filesystem::path dir;
    TempDir() {
        std::string t = (std::filesystem::temp_directory_path() / "kjit-bench-XXXXXX").string();
        dir = ::mkdtemp(t.data());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

/// `n` distinct rms_norm specializations, each compiled from its own copy of the source with
/// an extra empty kernel named after a fresh salt: the machine code differs, so neither kjit's
/// cache nor NVRTC's own (12.9+, keyed below the front end) has seen any of them. Request i
/// sets RMS_BLOCK = block_of(i).
struct Variants {
    SourceSet sources;
    std::vector<CompileRequest> requests;
};
inline Variants variants(const SourceSet& base, int n, int (*block_of)(int)) {
    const std::string salt = std::to_string(std::random_device{}());
    Variants v;
    for (const auto* h : base.headers())
        v.sources.add(*h);
    const SourceFile& k = base.kernel("rms_norm");
    for (int i = 0; i < n; ++i) {
        SourceFile f = k;
        const std::string name = "rms_norm_" + salt + "_" + std::to_string(i);
        f.name = name + ".cu";
        f.text += "\nextern \"C\" __global__ void kjit_bench_" + salt + "_" + std::to_string(i) +
                  "(int* p) { if (p) *p = " + std::to_string(i) + "; }\n";
        f.hash = hash128(f.text);
        v.sources.add(std::move(f));
        CompileRequest r{name, {}};
        r.options.defines["RMS_BLOCK"] = std::to_string(block_of(i));
        v.requests.push_back(std::move(r));
    }
    return v;
}

} // namespace kjit::bench
