#include "tuning/sweep_plan.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <unordered_set>

namespace kjit {

std::string SweepVariant::label() const {
    std::string s;
    for (const auto& [k, v] : params)
        s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return s;
}

namespace {

/// splitmix64: the random search's draws, the same for the same seed on every machine.
std::uint64_t next_random(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// A draw in [0, n) without modulo bias.
std::uint64_t draw_below(std::uint64_t& state, std::uint64_t n) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    for (;;)
        if (const std::uint64_t r = next_random(state); r < limit)
            return r % n;
}

} // namespace

std::vector<SweepVariant> expand(const SweepSpec& spec, std::size_t* rejected,
                                 std::optional<std::uint64_t> cap) {
    if (spec.params.empty())
        throw ConfigError("the sweep sweeps nothing", spec.file);
    const SweepSpace space(spec.params);
    const SweepParam* widest = &spec.params.front();
    for (const SweepParam& p : spec.params)
        if (p.size() > widest->size())
            widest = &p;
    const auto at_widest = [&](const std::string& message) {
        const auto at = spec.positions.find(widest->name);
        return ConfigError(message, spec.file, at == spec.positions.end() ? 0 : at->second.first,
                           at == spec.positions.end() ? 0 : at->second.second);
    };
    const bool exhaustive = spec.strategy == SweepSpec::Strategy::exhaustive;
    if (exhaustive) {
        try {
            space.check_cap(cap.value_or(default_sweep_cap()));
        } catch (const ConfigError& e) {
            throw at_widest(e.message);
        }
    } else if (!space.size()) {
        throw at_widest("the sweep's space has " + space.describe() +
                        ": too many to draw from; narrow the ranges");
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
    std::size_t dropped = 0;
    std::string first_precondition;
    // Point i planned, or nullopt when a constraint or a precondition drops it.
    const auto variant_at = [&](std::uint64_t i) -> std::optional<SweepVariant> {
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
            for (const auto& c : spec.constraints)
                if (c.eval(s) == 0.0) {
                    ++dropped;
                    return std::nullopt;
                }
            v.plan = planner.plan(shape, spec.dtype, v.defines, swept_launch);
        } catch (const PreconditionError& e) {
            ++dropped;
            if (first_precondition.empty())
                first_precondition = e.message;
            return std::nullopt;
        } catch (const ConfigError& e) {
            throw ConfigError(e.message, e.file.empty() ? spec.file : e.file, e.line, e.column);
        }
        v.defines = v.plan.defines;
        v.launch = v.plan.launch;
        const StepPlan& main = v.plan.main_launch();
        v.grid = main.grid;
        v.block = main.block;
        v.smem = main.smem;
        return v;
    };
    const auto is_baseline = [&](const SweepVariant& v) {
        return std::all_of(spec.baseline.begin(), spec.baseline.end(),
                           [&](const auto& kv) { return v.params.at(kv.first) == kv.second; });
    };

    std::vector<SweepVariant> out;
    if (exhaustive) {
        for (std::uint64_t i = 0; i < points; ++i)
            if (auto v = variant_at(i))
                out.push_back(std::move(*v));
    } else {
        // `budget` distinct valid points, drawn without expanding the space: the named
        // baseline first (it counts), then uniform draws, each point at most once. Draws stop
        // when every point was drawn or 1000 draws per wanted variant found none.
        std::unordered_set<std::uint64_t> drawn;
        if (!spec.baseline.empty()) {
            std::uint64_t index = 0;
            for (const SweepParam& p : spec.params) {
                std::uint64_t k = 0;
                while (k < p.size() && p.value(k) != spec.baseline.at(p.name))
                    ++k;
                if (k == p.size())
                    throw ConfigError("the baseline variant is not a point of the space",
                                      spec.file);
                index = index * p.size() + k;
            }
            drawn.insert(index);
            auto v = variant_at(index);
            if (!v)
                throw ConfigError("the baseline variant does not satisfy the constraints" +
                                      (first_precondition.empty() ? std::string()
                                                                  : " (" + first_precondition + ")"),
                                  spec.file);
            out.push_back(std::move(*v));
        }
        std::uint64_t state = spec.seed;
        std::uint64_t misses = 0;
        while (out.size() < spec.budget && drawn.size() < points &&
               misses < 1000 * spec.budget) {
            const std::uint64_t i = draw_below(state, points);
            if (!drawn.insert(i).second)
                continue;
            if (auto v = variant_at(i))
                out.push_back(std::move(*v));
            else
                ++misses;
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
        base = static_cast<std::size_t>(
            std::find_if(out.begin(), out.end(), is_baseline) - out.begin());
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
