#include "jit/compile_cache.hpp"

#include "core/warnings.hpp"
#include "jit/compile_record.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <unordered_map>

namespace kjit {

namespace {
double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// How long a wait for other hosts' compiles goes on before it names a holder.
constexpr auto kRemoteNotice = std::chrono::seconds(5);

std::string seconds_text(std::chrono::milliseconds ms) {
    char s[32];
    std::snprintf(s, sizeof s, "%g s", static_cast<double>(ms.count()) / 1000.0);
    return s;
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
    if (!settings_.remote)
        settings_.remote = RemoteSettings::from_flags();
    if (settings_.use_disk && !settings_.remote->url.empty())
        remote_ = std::make_unique<RemoteCache>(*settings_.remote, settings_.warn);
}

void CompileCache::warn(const std::string& message) const {
    if (settings_.warn)
        settings_.warn(message);
    else
        kjit::warn(message);
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
    // Nor is a check-only compile (there is no machine code to keep).
    const auto cacheable = [&](std::size_t i) {
        return disk_ && !requests[i].options.ptx && !requests[i].options.check_only &&
               !disk_->foreign(out[i].key.hash);
    };
    // A check-only request is answered by the full compile's entry when the disk holds it: the
    // same entry points, parameters, bounds and lowered names.
    const auto load_full = [&](std::size_t i) {
        if (!disk_ || !requests[i].options.check_only || requests[i].options.ptx)
            return false; // (a disk entry keeps no PTX)
        CompileOptions full = requests[i].options;
        full.check_only = false;
        const CacheKey key = make_cache_key(sources, requests[i].kernel, full);
        if (disk_->foreign(key.hash) || !(out[i].compiled = load(key, full, &out[i].read_ms)))
            return false;
        out[i].compiled->options = requests[i].options;
        out[i].compiled->cubin.clear();
        out[i].origin = Origin::disk;
        return true;
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
            if (!load_full(i))
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
        if (which.empty())
            return;
        std::vector<CompileJob> jobs;
        for (std::size_t i : which)
            jobs.push_back({&sources, requests[i].kernel, requests[i].options});
        std::vector<CompileOutcome> results =
            compile_all(jobs, settings_.jobs, settings_.worker, progress);
        std::vector<CacheEntry> through; // written through to the remote tier
        std::vector<Hash128> leased;
        for (std::size_t j = 0; j < which.size(); ++j) {
            const std::size_t i = which[j];
            out[i].origin = Origin::compiled;
            out[i].error = results[j].error;
            out[i].compiled = std::move(results[j].compiled);
            if (out[i].compiled && cacheable(i)) {
                store(out[i].key, *out[i].compiled);
                if (remote_)
                    through.push_back(
                        {out[i].key.hash, entry_meta(out[i].key, *out[i].compiled),
                         out[i].compiled->cubin});
            }
            leased.push_back(out[i].key.hash);
            locks.erase(i);
        }
        if (remote_) {
            remote_->store(through);
            remote_->release(leased);
        }
    };

    // The remote tier, for keys missing on disk whose disk lock this process holds: hits are
    // served and written to disk; the rest are leased `jobs` at a time and compiled, or, when
    // other hosts hold them all, waited for (polling) up to the lock wait since the last
    // progress, then compiled here. An entry that was refused is not read again: compiled.
    std::set<std::size_t> refused;
    const auto fetch = [&](const std::vector<std::size_t>& which) {
        std::vector<std::size_t> ask, rest;
        for (std::size_t i : which)
            (refused.contains(i) ? rest : ask).push_back(i);
        std::vector<Hash128> keys;
        for (std::size_t i : ask)
            keys.push_back(out[i].key.hash);
        const auto start = std::chrono::steady_clock::now();
        std::vector<RemoteLookup> found = remote_->load(keys);
        const double share = ask.empty() ? 0 : ms_since(start) / static_cast<double>(ask.size());
        for (std::size_t j = 0; j < ask.size(); ++j) {
            const std::size_t i = ask[j];
            out[i].read_ms += share;
            if (const std::optional<CacheEntry>& e = found[j].entry) {
                out[i].compiled = kernel_from_meta(e->meta, e->payload, {}, requests[i].options);
                disk_->store(*e);
                out[i].origin = Origin::remote;
                locks.erase(i);
                continue;
            }
            if (found[j].refused)
                refused.insert(i);
            rest.push_back(i);
        }
        return rest;
    };
    const auto resolve = [&](const std::vector<std::size_t>& which) {
        std::vector<std::size_t> pending, direct;
        for (std::size_t i : which)
            (remote_ && remote_->enabled() && cacheable(i) ? pending : direct).push_back(i);
        compile_round(direct);
        if (pending.empty())
            return;
        const std::chrono::milliseconds wait = disk_->lock_wait();
        auto progress_at = std::chrono::steady_clock::now();
        auto pause = std::chrono::milliseconds(5);
        while (!pending.empty()) {
            const std::size_t before = pending.size();
            pending = fetch(pending);
            if (pending.empty())
                break;
            std::vector<Hash128> keys;
            for (std::size_t i : pending)
                keys.push_back(out[i].key.hash);
            const auto taken = remote_->claim(keys, static_cast<std::size_t>(settings_.jobs));
            if (!taken) { // the tier went off or cannot lease: this host compiles the rest
                compile_round(pending);
                return;
            }
            if (!taken->empty()) {
                std::vector<std::size_t> mine, others;
                for (std::size_t j = 0; j < pending.size(); ++j)
                    (std::find(taken->begin(), taken->end(), j) != taken->end() ? mine : others)
                        .push_back(pending[j]);
                // Re-read under the lease: another host may have stored it since the fetch.
                std::vector<std::size_t> left = fetch(mine);
                std::vector<Hash128> served;
                for (std::size_t i : mine)
                    if (out[i].origin == Origin::remote && out[i].compiled)
                        served.push_back(out[i].key.hash);
                remote_->release(served);
                compile_round(left);
                pending = std::move(others);
                progress_at = std::chrono::steady_clock::now();
                pause = std::chrono::milliseconds(5);
                continue;
            }
            const auto now = std::chrono::steady_clock::now();
            if (pending.size() < before) {
                progress_at = now;
                pause = std::chrono::milliseconds(5);
            }
            const auto waited = now - progress_at;
            if (waited >= wait) {
                if (wait.count() > 0 && !remote_gave_up_warned_.exchange(true))
                    warn(remote_->lease_holder(out[pending.front()].key.hash) +
                         " still holds the remote lease of kernel " + out[pending.front()].key.kernel +
                         " (" + remote_->describe() + ") after " + seconds_text(wait) +
                         " (KJIT_CACHE_LOCK_WAIT): " + std::to_string(pending.size()) +
                         " kernel(s) are compiled here without waiting");
                compile_round(pending);
                return;
            }
            if (waited >= kRemoteNotice && !remote_wait_warned_.exchange(true))
                warn("waiting for " + remote_->lease_holder(out[pending.front()].key.hash) +
                     ", which holds the remote lease of kernel " + out[pending.front()].key.kernel +
                     " (" + remote_->describe() + "); after " + seconds_text(wait) +
                     " (KJIT_CACHE_LOCK_WAIT) it is compiled here instead");
            std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
                pause, wait - waited));
            pause = std::min(pause * 2, std::chrono::milliseconds(100));
        }
    };
    resolve(mine);

    // Wait for the other processes' compiles, all up to one deadline; what they did not store
    // (or did not finish by then), look up in the remote tier or compile here.
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
    resolve(left);

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
