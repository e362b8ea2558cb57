#include "tuning/roofline.hpp"

#include <algorithm>
#include <cstdio>

namespace kjit {

double fp32_peak_tflops(const Device& device) {
    const int major = device.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    const int minor = device.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    int lanes = 0;
    if (major == 7 || (major == 8 && minor == 0))
        lanes = 64;
    else if (major >= 8 && major <= 12)
        lanes = 128;
    if (lanes == 0)
        return 0;
    const double clock_hz = 1e3 * device.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    return device.sm_count() * lanes * 2.0 * clock_hz / 1e12;
}

Ceilings measure_ceilings(const Device& device) {
    const auto l2 = static_cast<std::size_t>(device.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    const std::size_t bytes = std::max<std::size_t>(4 * l2, std::size_t{256} << 20);
    DeviceBuffer src(bytes), dst(bytes);
    src.fill_bytes(1);
    BenchOptions options;
    options.warmup = 2;
    options.reps = 10;
    Bench bench(device, options);
    const Stats s = bench.run([&](CUstream stream) {
        check(driver().cuMemcpyDtoDAsync(dst.ptr(), src.ptr(), bytes, stream), "cuMemcpyDtoDAsync",
              "copy bandwidth, bytes=" + std::to_string(bytes));
    });
    Ceilings c;
    c.copy_gbps = 2.0 * static_cast<double>(bytes) / (s.median * 1e-3) / 1e9;
    c.copy_spread = s.relative_spread();
    c.fp32_tflops = fp32_peak_tflops(device);
    return c;
}

RooflineReading roofline(const Work& work, const Stats& timings, const Ceilings& ceilings) {
    RooflineReading r;
    r.work = work;
    r.ceilings = ceilings;
    r.measured_ms = timings.median;
    r.spread = timings.relative_spread();
    const double seconds = timings.median * 1e-3;
    if (seconds > 0) {
        r.achieved_gbps = work.bytes / seconds / 1e9;
        r.achieved_tflops = work.flops / seconds / 1e12;
    }
    if (ceilings.copy_gbps > 0) {
        r.bandwidth_share = r.achieved_gbps / ceilings.copy_gbps;
        r.floor_ms = work.bytes / (ceilings.copy_gbps * 1e9) * 1e3;
    }
    if (ceilings.fp32_tflops > 0)
        r.flops_share = r.achieved_tflops / ceilings.fp32_tflops;
    if (r.floor_ms > 0)
        r.ratio = r.measured_ms / r.floor_ms;
    if (r.spread > kWideSpread)
        r.verdict = "wide spread: contention or clock changes, not a clean reading";
    else if (r.floor_ms <= 0)
        r.verdict = "no floor: nothing moved or no bandwidth ceiling";
    else if (r.ratio >= kStarvedRatio)
        r.verdict = "starved: large ratio with a tight spread (grid, occupancy or latency leave "
                    "bandwidth unused)";
    else
        r.verdict = "near the bandwidth floor";
    return r;
}

std::string format_roofline(const RooflineReading& r, const std::string& label) {
    const std::string tag = label.empty() ? "" : " " + label;
    char a[512], b[512], peak[64] = "unknown";
    if (r.ceilings.fp32_tflops > 0)
        std::snprintf(peak, sizeof peak, "%.1f%% of %.1f fp32 peak", 100 * r.flops_share,
                      r.ceilings.fp32_tflops);
    std::snprintf(a, sizeof a,
                  "  roofline%s: %.1f MB moved, %.3f GFLOP: %.1f GB/s = %.1f%% of %.1f GB/s "
                  "(d2d copy, measured in this run, spread %.1f%%), %.2f TFLOP/s (%s)\n",
                  tag.c_str(), r.work.bytes / 1e6, r.work.flops / 1e9, r.achieved_gbps,
                  100 * r.bandwidth_share, r.ceilings.copy_gbps, 100 * r.ceilings.copy_spread,
                  r.achieved_tflops, peak);
    std::snprintf(b, sizeof b,
                  "  floor%s %.4g ms (bytes / copy bandwidth), measured %.4g ms (median), ratio "
                  "%.2f, spread %.1f%%: %s\n",
                  tag.c_str(), r.floor_ms, r.measured_ms, r.ratio, 100 * r.spread,
                  r.verdict.c_str());
    return std::string(a) + b;
}

} // namespace kjit
