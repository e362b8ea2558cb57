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


SweepPoints::SweepPoints(const SweepSpec& spec)
    : spec_(spec), space_(spec.params), planner_([&] {
          try {
              return ContractPlanner(spec.contract);
          } catch (const ConfigError& e) {
              throw ConfigError(e.message, spec.file);
          }
      }()) {
    if (spec.params.empty())
        throw ConfigError("the sweep sweeps nothing", spec.file);
    for (const auto& [k, v] : spec.shape)
        shape_[k] = v;
}

std::optional<SweepVariant> SweepPoints::at(std::uint64_t index) {
    SweepVariant v;
    LaunchValues swept_launch;
    v.defines = spec_.defines;
    v.params = space_.point(index);
    for (const SweepParam& param : spec_.params) {
        const long long value = v.params.at(param.name);
        if (param.define)
            v.defines[param.name] = std::to_string(value);
        else
            swept_launch[param.name] = value;
    }
    try {
        // Constraints first: a rejected combination is never planned.
        Scope s = spec_.scope(v.params);
        for (const auto& [k, value] :
             planner_.launch_values(shape_, spec_.dtype, v.defines, swept_launch))
            s[k] = static_cast<double>(value);
        for (const auto& c : spec_.constraints)
            if (c.eval(s) == 0.0) {
                ++rejected_;
                last_rejection_ = "constraint '" + c.text() + "' (line " +
                                  std::to_string(c.where().line) + ") is false";
                return std::nullopt;
            }
        v.plan = planner_.plan(shape_, spec_.dtype, v.defines, swept_launch);
    } catch (const PreconditionError& e) {
        ++rejected_;
        if (first_precondition_.empty())
            first_precondition_ = e.message;
        last_rejection_ = e.message;
        return std::nullopt;
    } catch (const ConfigError& e) {
        // Where the contract writes what fails, and which point of the sweep's space made it.
        const bool in_sweep = e.file.empty() || e.file == spec_.file;
        throw ConfigError(
            "variant " + v.label() + (in_sweep ? "" : " of " + spec_.file) + ": " + e.message +
                (in_sweep ? "" : " (the sweep's 'constraints' can leave such points out)"),
            in_sweep ? spec_.file : e.file, e.line, e.column);
    }
    v.defines = v.plan.defines;
    v.launch = v.plan.launch;
    const StepPlan& main = v.plan.main_launch();
    v.grid = main.grid;
    v.block = main.block;
    v.smem = main.smem;
    return v;
}

std::optional<std::uint64_t> SweepPoints::index_of(const std::map<std::string, long long>& values) const {
    std::uint64_t index = 0;
    for (const SweepParam& p : spec_.params) {
        const auto want = values.find(p.name);
        if (want == values.end())
            return std::nullopt;
        const auto k = p.index_of(want->second);
        if (!k)
            return std::nullopt;
        index = index * p.size() + *k;
    }
    return index;
}

std::vector<std::uint64_t> SweepPoints::neighbours(std::uint64_t index) const {
    // The digits of `index` in the mixed radix of the parameters' sizes, last fastest.
    std::vector<std::uint64_t> digit(spec_.params.size());
    std::uint64_t rest = index;
    for (std::size_t p = spec_.params.size(); p-- > 0;) {
        digit[p] = rest % spec_.params[p].size();
        rest /= spec_.params[p].size();
    }
    std::vector<std::uint64_t> out;
    std::uint64_t stride = 1;
    for (std::size_t p = spec_.params.size(); p-- > 0;) {
        if (digit[p] > 0)
            out.push_back(index - stride);
        if (digit[p] + 1 < spec_.params[p].size())
            out.push_back(index + stride);
        stride *= spec_.params[p].size();
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string SweepPoints::none_left() const {
    return "no variant satisfies the constraints (" + std::to_string(rejected_) + " rejected" +
           (first_precondition_.empty() ? "" : "; " + first_precondition_) + ")";
}

std::uint64_t next_random(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::uint64_t draw_below(std::uint64_t& state, std::uint64_t n) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    for (;;)
        if (const std::uint64_t r = next_random(state); r < limit)
            return r % n;
}

std::vector<SweepVariant> expand(const SweepSpec& spec, std::size_t* rejected,
                                 std::optional<std::uint64_t> cap) {
    SweepPoints points(spec);
    const SweepSpace& space = points.space();
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
    const std::uint64_t size = *space.size();
    const auto is_baseline = [&](const SweepVariant& v) {
        return std::all_of(spec.baseline.begin(), spec.baseline.end(),
                           [&](const auto& kv) { return v.params.at(kv.first) == kv.second; });
    };

    std::vector<SweepVariant> out;
    if (exhaustive) {
        for (std::uint64_t i = 0; i < size; ++i)
            if (auto v = points.at(i))
                out.push_back(std::move(*v));
    } else {
        // Random: `budget` distinct valid points, drawn without expanding the space: the named
        // baseline first (it counts), then uniform draws, each point at most once. Draws stop
        // when every point was drawn or 1000 draws per wanted variant found none. Local: its
        // start, the baseline or the first valid draw.
        const std::uint64_t wanted =
            spec.strategy == SweepSpec::Strategy::local ? 1 : spec.budget;
        std::unordered_set<std::uint64_t> drawn;
        if (!spec.baseline.empty()) {
            const auto index = points.index_of(spec.baseline);
            if (!index)
                throw ConfigError(spec.baseline.size() < spec.params.size()
                                      ? "a random or local search draws its baseline as one "
                                        "point: the baseline names every swept parameter"
                                      : "the baseline variant is not a point of the space",
                                  spec.file);
            drawn.insert(*index);
            auto v = points.at(*index);
            if (!v)
                throw ConfigError("the baseline variant does not satisfy the constraints (" +
                                      points.none_left() + ")",
                                  spec.file);
            out.push_back(std::move(*v));
        }
        std::uint64_t state = spec.seed;
        std::uint64_t misses = 0;
        while (out.size() < wanted && drawn.size() < size && misses < 1000 * wanted) {
            const std::uint64_t i = draw_below(state, size);
            if (!drawn.insert(i).second)
                continue;
            if (auto v = points.at(i))
                out.push_back(std::move(*v));
            else
                ++misses;
        }
    }
    if (rejected)
        *rejected = points.rejected();
    if (out.empty())
        throw ConfigError(points.none_left(), spec.file);
    // The baseline: the variant the [check] table names, else the first.
    std::size_t base = 0;
    if (!spec.baseline.empty()) {
        base = static_cast<std::size_t>(
            std::find_if(out.begin(), out.end(), is_baseline) - out.begin());
        if (base == out.size()) {
            // Why: the named point planned again (every parameter named), else the first drop.
            std::string why = points.last_rejection();
            if (const auto index = points.index_of(spec.baseline); index && !points.at(*index))
                why = points.last_rejection();
            std::string named;
            for (const auto& [k, value] : spec.baseline)
                named += (named.empty() ? "" : " ") + k + "=" + std::to_string(value);
            const auto at = spec.positions.find("[check] baseline");
            throw ConfigError("the baseline variant (" + named +
                                  ") is not among the variants that satisfy the constraints" +
                                  (why.empty() ? "" : ": " + why),
                              spec.file, at == spec.positions.end() ? 0 : at->second.first,
                              at == spec.positions.end() ? 0 : at->second.second);
        }
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
    // Launch values the baseline swept, and the reference's own: a launch parameter's default
    // is evaluated again under the reference's defines (`CHUNKS = "SPLIT_K"`).
    v.launch.clear();
    for (const SweepParam& p : spec.params)
        if (!p.define)
            v.launch[p.name] = baseline.params.at(p.name);
    for (const auto& [name, value] : spec.reference_variant) {
        const std::string& k = name; // clang 14: no lambda capture of a structured binding
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
        throw spec.error_at("[check] reference_variant",
                            "the reference variant (" + v.label() + "): " + e.message);
    }
    const StepPlan& main = v.plan.main_launch();
    v.grid = main.grid;
    v.block = main.block;
    v.smem = main.smem;
    return v;
}

} // namespace kjit
