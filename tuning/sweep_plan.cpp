#include "tuning/sweep_plan.hpp"

#include "core/error.hpp"

namespace kjit {

std::string SweepVariant::label() const {
    std::string s;
    for (const auto& [k, v] : params)
        s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return s;
}

std::vector<SweepVariant> expand(const SweepSpec& spec, std::size_t* rejected) {
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
    std::vector<std::size_t> idx(spec.params.size(), 0);
    while (true) {
        SweepVariant v;
        LaunchValues swept_launch;
        v.defines = spec.defines;
        for (std::size_t p = 0; p < spec.params.size(); ++p) {
            const SweepParam& param = spec.params[p];
            const long long value = param.values[idx[p]];
            v.params[param.name] = value;
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
            throw ConfigError(e.message, spec.file, e.line, e.column);
        }
        std::size_t p = spec.params.size();
        bool done = true;
        while (p > 0) {
            --p;
            if (++idx[p] < spec.params[p].values.size()) {
                done = false;
                break;
            }
            idx[p] = 0;
        }
        if (done)
            break;
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

} // namespace kjit
