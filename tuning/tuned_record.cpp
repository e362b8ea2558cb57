#include "tuning/tuned_record.hpp"

#include "core/error.hpp"
#include "tuning/sweep_judge.hpp"

namespace kjit {

TunedEntry tuned_entry(const SweepSpec& spec, const SweepResult& result) {
    const SweepRow* best = nullptr;
    const SweepRow* base = nullptr;
    for (const SweepRow& row : result.rows) {
        if (row.variant.baseline)
            base = &row;
        if (row_passed(row) && (!best || row.stats.median < best->stats.median))
            best = &row;
    }
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
