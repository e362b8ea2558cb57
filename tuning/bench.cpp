#include "tuning/bench.hpp"

#include "runtime/graph.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>

namespace kjit {

Stats Stats::of(std::span<const double> samples) {
    if (samples.empty())
        throw Error("statistics of no samples");
    Stats s;
    s.samples.assign(samples.begin(), samples.end());
    std::vector<double> sorted = s.samples;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    s.min = sorted.front();
    s.max = sorted.back();
    s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
    double sq = 0;
    for (double v : sorted)
        sq += (v - s.mean) * (v - s.mean);
    s.stddev = n > 1 ? std::sqrt(sq / static_cast<double>(n - 1)) : 0.0;
    return s;
}

double Stats::relative_spread() const {
    return mean != 0 ? stddev / mean : 0.0;
}

int Stats::digits() const {
    // Four decimals, more when the smallest sample needs them for four significant digits (a
    // microsecond per call in ms).
    if (!(min > 0) || min >= 1)
        return 4;
    return std::clamp(3 - static_cast<int>(std::floor(std::log10(min))), 4, 12);
}

std::string Stats::summary(const std::string& unit) const {
    char buf[320];
    const int d = digits();
    std::snprintf(buf, sizeof buf,
                  "min %.*f median %.*f mean %.*f max %.*f stddev %.*f %s (spread %.1f%%)", d, min,
                  d, median, d, mean, d, max, d, stddev, unit.c_str(), 100 * relative_spread());
    return buf;
}

std::string Stats::samples_text(int digits) const {
    if (digits < 0)
        digits = this->digits();
    std::string out;
    char buf[64];
    for (double v : samples) {
        std::snprintf(buf, sizeof buf, "%.*f", digits, v);
        out += (out.empty() ? "" : " ") + std::string(buf);
    }
    return out;
}

std::string Provenance::text() const {
    return "gpu=" + gpu + " (" + arch + ") defines=" + defines + " tier=" + tier +
           " src=" + source_hash;
}

Bench::Bench(const Device& device, BenchOptions options) : options_(std::move(options)) {
    if (options_.warmup < 0 || options_.reps < 1 || options_.calls < 1 ||
        options_.input_sets < 1)
        throw ConfigError("bench needs warmup >= 0, reps >= 1, calls >= 1 and input sets >= 1 "
                          "(got warmup " +
                          std::to_string(options_.warmup) + ", reps " +
                          std::to_string(options_.reps) + ", calls " +
                          std::to_string(options_.calls) + ", input sets " +
                          std::to_string(options_.input_sets) + ")");
    if (options_.flush_l2) {
        const auto l2 =
            static_cast<std::size_t>(device.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
        // Twice the L2 and at least 64 MiB: enough to evict every line whatever the policy.
        flush_ = DeviceBuffer(std::max<std::size_t>(2 * l2, std::size_t{64} << 20));
    }
}

std::string Bench::describe() const {
    return "warmup " + std::to_string(options_.warmup) + ", reps " + std::to_string(options_.reps) +
           ", l2 flush " +
           (options_.flush_l2 ? std::to_string(flush_.bytes() >> 20) + " MiB"
                              : std::string("off")) +
           ", graph " + (options_.graph ? "on" : "off") + ", calls " +
           std::to_string(options_.calls) + ", input sets " +
           std::to_string(options_.input_sets);
}

void Bench::before_rep(int rep) {
    if (options_.select_inputs && !options_.graph)
        options_.select_inputs(rep % options_.input_sets);
    if (options_.flush_l2)
        check(driver().cuMemsetD8Async(flush_.ptr(), static_cast<unsigned char>(rep),
                                       flush_.bytes(), stream_.handle()),
              "cuMemsetD8Async", "L2 flush");
}

Stats Bench::run(const LaunchSequence& launch) {
    const int calls = options_.calls;
    const LaunchSequence repeated = [&](CUstream s) {
        for (int c = 0; c < calls; ++c)
            launch(s);
    };
    const LaunchSequence& rep = calls == 1 ? launch : repeated;
    return options_.graph ? run_graph(rep) : run_direct(rep);
}

Stats Bench::timed(const std::vector<Event>& start, const std::vector<Event>& end) const {
    std::vector<double> ms(start.size());
    for (std::size_t r = 0; r < start.size(); ++r)
        ms[r] = Event::elapsed_ms(start[r], end[r]) / options_.calls;
    return Stats::of(ms);
}

Stats Bench::run_direct(const LaunchSequence& launch) {
    const CUstream s = stream_.handle();
    for (int w = 0; w < options_.warmup; ++w) {
        before_rep(w);
        launch(s);
    }
    // Every event is recorded before the first is read: no host round trip between reps.
    std::vector<Event> start(options_.reps), end(options_.reps);
    for (int r = 0; r < options_.reps; ++r) {
        before_rep(options_.warmup + r);
        start[r].record(s);
        launch(s);
        end[r].record(s);
    }
    stream_.synchronize();
    return timed(start, end);
}

Stats Bench::run_graph(const LaunchSequence& launch) {
    const CUstream s = stream_.handle();
    // A graph bakes in its kernel arguments: one graph per input set.
    std::vector<Graph> graphs;
    for (int set = 0; set < options_.input_sets; ++set) {
        if (options_.select_inputs)
            options_.select_inputs(set);
        graphs.push_back(Graph::capture(launch, s));
    }
    const auto set_of = [&](int rep) {
        return static_cast<std::size_t>(rep % options_.input_sets);
    };
    for (int w = 0; w < options_.warmup; ++w) {
        before_rep(w);
        graphs[set_of(w)].launch(s);
    }
    std::vector<Event> start(options_.reps), end(options_.reps);
    for (int r = 0; r < options_.reps; ++r) {
        const int rep = options_.warmup + r;
        before_rep(rep);
        start[r].record(s);
        graphs[set_of(rep)].launch(s);
        end[r].record(s);
    }
    stream_.synchronize();
    return timed(start, end);
}

} // namespace kjit
