#include "tuning/tuned_record.hpp"

#include "core/error.hpp"
#include "tuning/sweep_judge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace kjit {

namespace {
/// (q3 - q1) / median of a row's repetitions; 0 with fewer than four.
double relative_iqr(const Stats& s) {
    std::vector<double> v = s.samples;
    if (v.size() < 4 || s.median <= 0)
        return 0;
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { // linear interpolation between the closest ranks
        const double pos = q * static_cast<double>(v.size() - 1);
        const auto lo = static_cast<std::size_t>(pos);
        const double frac = pos - static_cast<double>(lo);
        return lo + 1 < v.size() ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
    };
    return (at(0.75) - at(0.25)) / s.median;
}

std::string percent(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", 100 * x);
    return buf;
}
} // namespace

TunedPick tuned_pick(const SweepResult& result) {
    const SweepRow* baseline = nullptr; // the baseline row, run or not
    std::vector<const SweepRow*> passed;
    for (const SweepRow& row : result.rows) {
        if (row.variant.baseline)
            baseline = &row;
        if (row_passed(row))
            passed.push_back(&row);
    }
    const SweepRow* base = baseline && row_passed(*baseline) ? baseline : nullptr;
    std::stable_sort(passed.begin(), passed.end(), [](const SweepRow* a, const SweepRow* b) {
        return a->stats.median < b->stats.median;
    });
    if (passed.empty() || !base || passed.front() == base || base->stats.median <= 0)
        return {passed.empty() ? nullptr : passed.front(), baseline, {}};
    // The standard error of a median, from the interquartile range (normal samples:
    // 1.2533 sigma / sqrt(n), sigma = IQR / 1.349); the noise of a difference of two medians is
    // twice its standard error, and at least 1 %.
    const auto se = [](const Stats& s) {
        return 0.929 * relative_iqr(s) / std::sqrt(static_cast<double>(s.samples.size()));
    };
    const auto gain = [&](const SweepRow* r) { return 1 - r->stats.median / base->stats.median; };
    const auto noise = [&](const SweepRow* r) {
        return std::max(0.01, 2 * std::hypot(se(r->stats), se(base->stats)));
    };
    // The fastest variant that beats the baseline beyond the noise of the two.
    for (const SweepRow* r : passed) {
        if (r == base)
            break;
        if (gain(r) > noise(r))
            return {r, baseline, {}};
    }
    const SweepRow* fastest = passed.front();
    std::string swept;
    for (const auto& [k, v] : fastest->variant.defines)
        if (base->variant.defines.count(k) == 0 || base->variant.defines.at(k) != v)
            swept += (swept.empty() ? "" : " ") + k + "=" + v;
    return {base, baseline, (swept.empty() ? std::string("the fastest variant") : swept) + " ran " +
                      percent(gain(fastest)) + " under the baseline, inside the noise (" +
                      percent(noise(fastest)) + "): baseline kept"};
}

TunedEntry tuned_entry(const SweepSpec& spec, const SweepResult& result, const TunedPick& pick) {
    const SweepRow* best = pick.row;
    const SweepRow* base = pick.baseline;
    if (!best)
        throw ConfigError("no variant passed its check: nothing to record", spec.file);
    TunedEntry e;
    e.kernel = spec.kernel;
    if (spec.contract.name != spec.kernel)
        e.contract = spec.contract.name;
    for (const auto& [k, v] : spec.shape)
        e.shape[k] = v;
    e.dtype = std::string(dtype_name(spec.dtype));
    e.gpu = result.provenance.gpu;
    e.arch = result.provenance.arch;
    e.source = result.tuned_source;
    // What was measured: the swept defines and the sweep file's fixed ones.
    for (const auto& [k, v] : spec.defines)
        e.defines[k] = v;
    for (const SweepParam& p : spec.params)
        if (p.define)
            e.defines[p.name] = best->variant.defines.at(p.name);
    if (e.defines.empty())
        throw ConfigError("the sweep varies launch parameters only: a tuned entry records "
                          "defines, which start-up compiles in",
                          spec.file);
    e.median_us = best->stats.median * 1e3;
    e.baseline_us = base && base->error.empty() ? base->stats.median * 1e3 : 0;
    e.sweep = spec.file;
    return e;
}

} // namespace kjit
