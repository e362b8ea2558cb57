#pragma once
// Inside the linter: runs independent jobs on every core.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace kjit::lint::detail {

/// Calls `job(i)` for every i in [0, n), on up to one thread per core; `job` must not throw.
template <typename Job> void parallel_for(std::size_t n, const Job& job) {
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next++) < n;)
            job(i);
    };
    const std::size_t threads =
        std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t)
        pool.emplace_back(worker);
    worker();
    for (auto& t : pool)
        t.join();
}

} // namespace kjit::lint::detail
