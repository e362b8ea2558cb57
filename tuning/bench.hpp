#pragma once

#include "runtime/buffer.hpp"
#include "runtime/context.hpp"
#include "runtime/stream.hpp"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace kjit {

/// Summary of repeated timings: every sample in order, and their order statistics.
struct Stats {
    std::vector<double> samples; ///< in the order they were taken
    double min = 0;
    double median = 0; ///< the middle sample, or the mean of the two middle ones
    double mean = 0;
    double max = 0;
    double stddev = 0; ///< sample standard deviation (n - 1); 0 for fewer than two samples

    /// The statistics of `samples`; Error when there are none.
    static Stats of(std::span<const double> samples);
    /// stddev / mean: the spread a reading is quoted with (0 when the mean is 0).
    [[nodiscard]] double relative_spread() const;
    /// "min 0.1234 median 0.1250 mean 0.1260 max 0.1300 stddev 0.0020 ms (spread 1.6%)".
    [[nodiscard]] std::string summary(const std::string& unit = "ms") const;
    /// Every sample, space-separated, with `digits` decimals.
    [[nodiscard]] std::string samples_text(int digits = -1) const;
    /// Decimals that show the samples to four significant digits, at least four (-1 above).
    [[nodiscard]] int digits() const;
};

/// What produced a reading; printed beside every number (DESIGN.md #8).
struct Provenance {
    std::string gpu;         ///< "NVIDIA H200"
    std::string arch;        ///< "sm_90"
    std::string defines;     ///< every resolved define, flags' included: "RMS_BLOCK=256"
    std::string tier;        ///< the resolved env tier: "base"
    std::string source_hash; ///< first 12 hex digits of the kernel source's xxh3-128
    /// "gpu=NVIDIA H200 (sm_90) defines=RMS_BLOCK=256 tier=base src=e07df706f785".
    [[nodiscard]] std::string text() const;
};

/// The launches one repetition times, enqueued on the given stream (no synchronization inside).
using LaunchSequence = std::function<void(CUstream)>;

/// How a Bench repeats a launch sequence.
struct BenchOptions {
    int warmup = 3; ///< untimed repetitions first
    int reps = 20;  ///< timed repetitions
    /// Write a buffer of twice the L2 size before each repetition (outside the timed region),
    /// so every repetition starts with a cold L2.
    bool flush_l2 = false;
    /// Capture the sequence once per input set into a CUDA graph and time graph launches:
    /// for tiny kernels whose launch gaps would otherwise dominate.
    bool graph = false;
    /// Launches of the sequence per repetition, back to back (captured into one graph with
    /// `graph`); a sample is the repetition's time over `calls`, the time per call. Many calls
    /// amortize the launch gaps, and the data stay in L2 after the first (an L2 flush, when
    /// asked, comes before each repetition only): the figure of a kernel inside a decode chain.
    int calls = 1;
    /// Input sets the caller rotates among; select_inputs(rep % input_sets) runs before each
    /// repetition (warm-ups included), outside the timed region.
    int input_sets = 1;
    std::function<void(int set)> select_inputs;
};

/// Times launch sequences on its own stream with device events.
class Bench {
  public:
    /// A bench in the current context of `device`; allocates the L2 flush buffer when asked.
    Bench(const Device& device, BenchOptions options);

    /// Runs warm-ups then timed repetitions; one sample (ms) per repetition.
    Stats run(const LaunchSequence& launch);
    [[nodiscard]] CUstream stream() const { return stream_.handle(); }
    [[nodiscard]] const BenchOptions& options() const { return options_; }
    /// Bytes written per L2 flush (0 without flush_l2).
    [[nodiscard]] std::size_t flush_bytes() const { return flush_.bytes(); }
    /// "warmup 3, reps 20, l2 flush off, graph off, calls 1, input sets 1".
    [[nodiscard]] std::string describe() const;

  private:
    void before_rep(int rep);
    Stats run_direct(const LaunchSequence& launch);
    Stats run_graph(const LaunchSequence& launch);
    /// Each repetition's time per call, from its two events.
    Stats timed(const std::vector<Event>& start, const std::vector<Event>& end) const;
    BenchOptions options_;
    Stream stream_;
    DeviceBuffer flush_;
};

} // namespace kjit
