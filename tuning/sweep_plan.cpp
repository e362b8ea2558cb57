#include "tuning/sweep_plan.hpp"

#include "core/error.hpp"

#include <algorithm>

namespace kjit {

std::string SweepVariant::label() const {
    std::string s;
    for (const auto& [k, v] : params)
        s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return s;
}

std::vector<SweepVariant> expand(const SweepSpec& spec, std::size_t* rejected,
                                 std::optional<std::uint64_t> cap) {
    if (spec.params.empty())
        throw ConfigError("the sweep sweeps nothing", spec.file);
    const SweepSpace space(spec.params);
    try {
        space.check_cap(cap.value_or(default_sweep_cap()));
    } catch (const ConfigError& e) {
        const SweepParam* widest = &spec.params.front();
        for (const SweepParam& p : spec.params)
            if (p.size() > widest->size())
                widest = &p;
        const auto at = spec.positions.find(widest->name);
        throw ConfigError(e.message, spec.file, at == spec.positions.end() ? 0 : at->second.first,
                          at == spec.positions.end() ? 0 : at->second.second);
    }
    const std::uint64_t points = *space.size();
    const ContractPlanner planner = [&] {
        try {
            return ContractPlanner(spec.contract);
        } catch (const ConfigError& e) {
            throw ConfigError(e.message, spec.file);
        }
    }();
    ShapeValues shape;
    for (const auto& [k, v] : spec.shape)
        shape[k] = v;
    std::vector<SweepVariant> out;
    std::size_t dropped = 0;
    std::string first_precondition;
    for (std::uint64_t i = 0; i < points; ++i) {
        SweepVariant v;
        LaunchValues swept_launch;
        v.defines = spec.defines;
        v.params = space.point(i);
        for (const SweepParam& param : spec.params) {
            const long long value = v.params.at(param.name);
            if (param.define)
                v.defines[param.name] = std::to_string(value);
            else
                swept_launch[param.name] = value;
        }
        try {
            // Constraints first: a rejected combination is never planned.
            Scope s = spec.scope(v.params);
            for (const auto& [k, value] :
                 planner.launch_values(shape, spec.dtype, v.defines, swept_launch))
                s[k] = static_cast<double>(value);
            bool ok = true;
            for (const auto& c : spec.constraints)
                ok = ok && c.eval(s) != 0.0;
            if (ok) {
                v.plan = planner.plan(shape, spec.dtype, v.defines, swept_launch);
                v.defines = v.plan.defines;
                v.launch = v.plan.launch;
                const StepPlan& main = v.plan.main_launch();
                v.grid = main.grid;
                v.block = main.block;
                v.smem = main.smem;
                out.push_back(std::move(v));
            } else {
                ++dropped;
            }
        } catch (const PreconditionError& e) {
            ++dropped;
            if (first_precondition.empty())
                first_precondition = e.message;
        } catch (const ConfigError& e) {
            throw ConfigError(e.message, e.file.empty() ? spec.file : e.file, e.line, e.column);
        }
    }
    if (rejected)
        *rejected = dropped;
    if (out.empty())
        throw ConfigError("no variant satisfies the constraints (" + std::to_string(dropped) +
                              " rejected" +
                              (first_precondition.empty() ? "" : "; " + first_precondition) + ")",
                          spec.file);
    // The baseline: the variant the [check] table names, else the first.
    std::size_t base = 0;
    if (!spec.baseline.empty()) {
        base = out.size();
        for (std::size_t i = 0; i < out.size(); ++i) {
            bool match = true;
            for (const auto& [k, v] : spec.baseline)
                match = match && out[i].params.at(k) == v;
            if (match) {
                base = i;
                break;
            }
        }
        if (base == out.size())
            throw ConfigError("the baseline variant is not among the variants that satisfy the "
                              "constraints",
                              spec.file);
    }
    out[base].baseline = true;
    return out;
}

bool uses_reference_variant(const SweepSpec& spec) {
    return spec.check == SweepSpec::Check::tolerance && spec.reference.empty();
}

SweepVariant reference_variant(const SweepSpec& spec, const SweepVariant& baseline) {
    SweepVariant v = baseline;
    v.baseline = false;
    for (const auto& [k, value] : spec.reference_variant) {
        const bool launch = std::any_of(
            spec.contract.launch_params.begin(), spec.contract.launch_params.end(),
            [&](const LaunchParam& p) { return p.name == k; });
        if (launch)
            v.launch[k] = value;
        else
            v.defines[k] = std::to_string(value);
        v.params[k] = value;
    }
    ShapeValues shape;
    for (const auto& [k, value] : spec.shape)
        shape[k] = value;
    try {
        v.plan = ContractPlanner(spec.contract).plan(shape, spec.dtype, v.defines, v.launch);
    } catch (const ConfigError& e) {
        throw ConfigError("the reference variant (" + v.label() + "): " + e.message, spec.file);
    }
    const StepPlan& main = v.plan.main_launch();
    v.grid = main.grid;
    v.block = main.block;
    v.smem = main.smem;
    return v;
}

} // namespace kjit
