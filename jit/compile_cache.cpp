#include "jit/compile_cache.hpp"

#include "jit/compile_record.hpp"

#include <chrono>
#include <unordered_map>

namespace kjit {

namespace {
double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}
} // namespace

std::string entry_meta(const CacheKey& key, const CompiledKernel& c) {
    std::string components;
    for (std::size_t i = 0; i < KeyComponents::kCount; ++i)
        components += (i ? "," : "") + hex64(key.components.hashes[i]);
    return kernel_meta(c) + "components=" + components + "\n";
}

CompileCache::CompileCache(CacheSettings settings) : settings_(std::move(settings)) {
    if (settings_.jobs <= 0)
        settings_.jobs = default_compile_jobs();
    if (settings_.worker.empty())
        settings_.worker = process_flags().get_string(kFlagCompileWorker);
    if (settings_.use_disk)
        disk_ = std::make_unique<DiskCache>(
            settings_.dir.empty() ? DiskCache::default_dir() : settings_.dir,
            settings_.max_bytes ? settings_.max_bytes : DiskCache::default_max_bytes(),
            settings_.warn, settings_.lock_wait.value_or(DiskCache::default_lock_wait()));
}

std::optional<CompiledKernel> CompileCache::load(const CacheKey& key,
                                                 const CompileOptions& options, double* read_ms) {
    if (!disk_)
        return std::nullopt;
    const auto start = std::chrono::steady_clock::now();
    std::optional<CacheEntry> entry = disk_->load(key.hash);
    *read_ms += ms_since(start);
    if (!entry)
        return std::nullopt;
    return kernel_from_meta(entry->meta, std::move(entry->payload), {}, options);
}

void CompileCache::store(const CacheKey& key, const CompiledKernel& compiled) {
    if (disk_)
        disk_->store({key.hash, entry_meta(key, compiled), compiled.cubin});
}

Specialized CompileCache::get(const SourceSet& sources, const CompileRequest& request) {
    return std::move(get_all(sources, std::span(&request, 1)).front());
}

std::vector<Specialized> CompileCache::get_all(const SourceSet& sources,
                                               std::span<const CompileRequest> requests,
                                               const CompileProgress& progress) {
    std::vector<Specialized> out(requests.size());
    // PTX is not cached (it would tie an entry to the driver): such requests always compile.
    const auto cacheable = [&](std::size_t i) {
        return disk_ && !requests[i].options.ptx && !disk_->foreign(out[i].key.hash);
    };
    std::unordered_map<std::string, std::size_t> first_of_key; // duplicates compile once
    std::vector<std::size_t> unique;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        try {
            out[i].key = make_cache_key(sources, requests[i].kernel, requests[i].options);
        } catch (...) {
            out[i].error = std::current_exception();
            continue;
        }
        if (first_of_key.emplace(out[i].key.hex(), i).second)
            unique.push_back(i);
    }

    // Hits, then misses whose lock we take at once (re-checked under the lock: another
    // process may have just stored it); the rest are being compiled by another process.
    std::vector<std::size_t> mine, theirs;
    std::unordered_map<std::size_t, DiskCache::Lock> locks;
    for (std::size_t i : unique) {
        if (cacheable(i) && (out[i].compiled = load(out[i].key, requests[i].options,
                                                    &out[i].read_ms))) {
            out[i].origin = Origin::disk;
            continue;
        }
        if (!cacheable(i)) {
            mine.push_back(i);
            continue;
        }
        DiskCache::Lock lock = disk_->lock(out[i].key.hash, false);
        if (lock.busy()) {
            theirs.push_back(i);
            continue;
        }
        if ((out[i].compiled = load(out[i].key, requests[i].options, &out[i].read_ms))) {
            out[i].origin = Origin::disk;
            continue;
        }
        locks.emplace(i, std::move(lock));
        mine.push_back(i);
    }

    const auto compile_round = [&](const std::vector<std::size_t>& which) {
        std::vector<CompileJob> jobs;
        for (std::size_t i : which)
            jobs.push_back({&sources, requests[i].kernel, requests[i].options});
        std::vector<CompileOutcome> results =
            compile_all(jobs, settings_.jobs, settings_.worker, progress);
        for (std::size_t j = 0; j < which.size(); ++j) {
            const std::size_t i = which[j];
            out[i].origin = Origin::compiled;
            out[i].error = results[j].error;
            out[i].compiled = std::move(results[j].compiled);
            if (out[i].compiled && cacheable(i))
                store(out[i].key, *out[i].compiled);
            locks.erase(i);
        }
    };
    compile_round(mine);

    // Wait for the other processes' compiles, all up to one deadline; what they did not store
    // (or did not finish by then), compile here.
    std::vector<std::size_t> left;
    const auto deadline =
        DiskCache::Clock::now() + (disk_ ? disk_->lock_wait() : std::chrono::milliseconds(0));
    for (std::size_t i : theirs) {
        DiskCache::Lock lock = disk_->lock_until(out[i].key.hash, deadline);
        if ((out[i].compiled = load(out[i].key, requests[i].options, &out[i].read_ms))) {
            out[i].origin = Origin::disk;
            continue;
        }
        locks.emplace(i, std::move(lock));
        left.push_back(i);
    }
    compile_round(left);

    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (out[i].error || out[i].compiled)
            continue;
        const Specialized& first = out[first_of_key.at(out[i].key.hex())];
        out[i].compiled = first.compiled;
        out[i].error = first.error;
        out[i].origin = first.origin;
    }
    return out;
}

} // namespace kjit
