#pragma once

#include "tuning/bench.hpp"

#include <string>

namespace kjit {

/// What one launch (or launch sequence) moves and computes.
struct Work {
    double bytes = 0; ///< bytes read plus bytes written in global memory
    double flops = 0; ///< floating-point operations (an FMA counts two)
};

/// The ceilings a reading is set against.
struct Ceilings {
    /// Device-to-device copy bandwidth measured in this run: bytes read plus written, per
    /// second, in units of 1e9.
    double copy_gbps = 0;
    double copy_spread = 0; ///< relative spread (stddev / mean) of the copy timings
    /// FP32 peak in units of 1e12 per second (SMs x FP32 lanes x 2 x clock); 0 when unknown.
    double fp32_tflops = 0;
};

/// FP32 peak of `device` from its SM count, clock and the FP32 lanes per SM of its
/// architecture; 0 for an architecture the table does not know.
double fp32_peak_tflops(const Device& device);

/// Times cuMemcpyDtoDAsync of a buffer far larger than L2 (4 x L2, at least 256 MiB) and
/// returns this device's ceilings now (in the current context).
Ceilings measure_ceilings(const Device& device);

/// A reading set against the ceilings.
struct RooflineReading {
    Work work;
    Ceilings ceilings;
    double measured_ms = 0;   ///< median of the timings
    double spread = 0;        ///< relative spread of the timings
    double achieved_gbps = 0; ///< bytes / median
    double achieved_tflops = 0;
    double bandwidth_share = 0; ///< achieved_gbps / copy_gbps
    double flops_share = 0;     ///< achieved_tflops / fp32_tflops (0 when the peak is unknown)
    double floor_ms = 0;        ///< bytes / copy bandwidth: the fastest the launch could be
    double ratio = 0;           ///< measured_ms / floor_ms
    /// Starved launch (large ratio, tight spread), contention (wide spread) or near the floor.
    std::string verdict;
};

/// The spread above which a reading is called contended rather than starved.
inline constexpr double kWideSpread = 0.05;
/// The measured / floor ratio at or above which a tight reading is called starved.
inline constexpr double kStarvedRatio = 1.5;

/// Sets `timings` of `work` against `ceilings`.
RooflineReading roofline(const Work& work, const Stats& timings, const Ceilings& ceilings);

/// Two lines: achieved GB/s and TFLOP/s with their shares of the ceilings; the floor, the
/// measured time, their ratio, the spread and the verdict. `label` ("A") follows each line's
/// first word.
std::string format_roofline(const RooflineReading& reading, const std::string& label = {});

} // namespace kjit
