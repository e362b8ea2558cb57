#include "tuning/sweep_measure.hpp"

#include "kernels/inputs.hpp"
#include "kernels/launch_case.hpp"
#include "kernels/reference.hpp"
#include "runtime/geometry.hpp"
#include "tuning/digest.hpp"
#include "tuning/numeric.hpp"

#include <algorithm>
#include <cmath>

namespace kjit {

SweepMeasure::SweepMeasure(const SweepSpec& spec, const std::vector<SweepVariant>& variants,
                           const Device& device, std::uint64_t seed,
                           const SweepVariant* reference,
                           std::span<const Function* const> reference_functions)
    : spec_(spec), device_(device) {
    // The baseline, else the first (a local search's later batches hold no baseline).
    auto base = std::find_if(variants.begin(), variants.end(),
                             [](const SweepVariant& v) { return v.baseline; });
    if (base == variants.end())
        base = variants.begin();
    // Every variant plans the same buffers; their sizes may depend on its values.
    std::vector<CasePlan> plans{base->plan};
    for (const SweepVariant& v : variants)
        plans.push_back(v.plan);
    if (reference)
        plans.push_back(reference->plan);
    const CasePlan capacity = buffer_capacity(plans);
    const std::vector<HostBuffer> inputs = generated_inputs(capacity, seed);
    buffers_ = std::make_unique<CaseBuffers>(capacity, inputs);
    if (spec.check != SweepSpec::Check::tolerance)
        return;
    if (reference) {
        // The reference variant, once, on the same inputs: every output written, every value
        // finite, or nothing can be checked against it.
        for (const HostBuffer& h : run_case_once(reference->plan, reference_functions, *buffers_)) {
            std::vector<double> v = element_values(h);
            const auto bad = std::count_if(v.begin(), v.end(),
                                           [](double x) { return !std::isfinite(x); });
            if (bad > 0)
                throw Error("the reference variant (" + reference->label() + ") left " +
                            std::to_string(bad) + " elements of " + h.name +
                            " unwritten or not finite: it cannot check anything");
            want_[h.name] = std::move(v);
        }
        return;
    }
    // The reference named by the sweep, fed the baseline variant's own inputs by name.
    CasePlan plan = base->plan;
    plan.reference = spec.reference;
    std::vector<std::vector<double>> values;
    for (std::size_t k = 0; k < plan.inputs.size(); ++k) {
        std::vector<double> v = element_values(inputs[k]);
        v.resize(plan.buffers[plan.inputs[k]].count);
        values.push_back(std::move(v));
    }
    std::vector<std::vector<double>> out =
        reference_outputs(plan, std::span<const std::vector<double>>(values));
    for (std::size_t i = 0; i < plan.outputs.size(); ++i)
        want_[plan.buffers[plan.outputs[i]].name] = std::move(out[i]);
}

void SweepMeasure::measure(SweepRow& row, std::span<const Function* const> functions,
                           double copy_gbps) {
    const CasePlan& plan = row.variant.plan;
    BenchOptions bo;
    bo.warmup = spec_.warmup;
    bo.reps = spec_.reps;
    bo.flush_l2 = spec_.flush_l2;
    bo.graph = spec_.graph;
    bo.calls = spec_.calls;
    Bench bench(device_, bo);
    const std::vector<HostBuffer> outs = run_case_once(plan, functions, *buffers_);
    for (std::size_t o = 0; o < outs.size(); ++o) {
        const HostBuffer& h = outs[o];
        if (plan.buffers[plan.outputs[o]].role != ArgRole::in_out)
            row.unwritten += find_unwritten(h).count;
        if (const auto w = want_.find(h.name); w != want_.end()) {
            const std::vector<double> got = element_values(h);
            row.error_vs_reference = std::max(row.error_vs_reference, relative_l2(got, w->second));
            row.max_abs_vs_reference =
                std::max(row.max_abs_vs_reference, max_abs_error(got, w->second));
        }
        row.digests.emplace_back(h.name, digest(h));
    }
    row.stats =
        bench.run([&](CUstream st) { enqueue_case(plan, functions, buffers_->pointers(), st); });
    const auto main = static_cast<std::size_t>(&plan.main_launch() - plan.steps.data());
    const Function& fn = *functions[main];
    const LaunchGeometry g = launch_geometry(fn, plan.steps[main].config());
    row.blocks_per_sm = g.blocks_per_sm;
    row.waves = g.waves;
    row.sm_share = g.sm_share;
    row.registers = fn.registers();
    if (plan.bytes > 0) {
        row.gbps = plan.bytes / (row.stats.median * 1e-3) / 1e9;
        row.copy_share = copy_gbps > 0 ? row.gbps / copy_gbps : 0;
    }
}

} // namespace kjit
