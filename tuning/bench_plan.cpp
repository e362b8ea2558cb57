#include "tuning/bench_plan.hpp"

#include "core/error.hpp"
#include "kernels/shape.hpp"
#include "tuning/abba.hpp"

namespace kjit {

BenchPlan plan_bench(const KernelContract& contract, const std::string& shape,
                     const std::string& dtype, std::span<const std::string> defines,
                     std::span<const std::string> vs, int pairs) {
    BenchPlan plan;
    plan.shape = parse_shape(contract, shape.empty() ? contract.bench_shape : shape);
    plan.dtype = dtype.empty() ? contract.dtypes.front() : parse_dtype(dtype);
    plan.sets.push_back(merge_defines(contract.defines, defines));
    if (!vs.empty())
        plan.sets.push_back(merge_defines(plan.sets[0], vs));
    const ContractPlanner planner(contract);
    for (const Defines& d : plan.sets)
        plan.plans.push_back(planner.plan(plan.shape, plan.dtype, d));
    (void)abba_order(pairs); // a pair count it refuses is a usage error, found here
    return plan;
}

} // namespace kjit
