#include "tuning/selfcheck.hpp"

#include "kernels/inputs.hpp"
#include "kernels/reference.hpp"
#include "kernels/registry.hpp"
#include "tuning/case_arms.hpp"
#include "tuning/numeric.hpp"

#include <algorithm>

namespace kjit {

bool CheckResult::passed() const {
    return std::all_of(outputs.begin(), outputs.end(),
                       [](const OutputCheck& o) { return o.passed(); });
}

std::vector<CheckCase> default_check_cases() {
    std::vector<CheckCase> cases;
    for (const KernelContract* contract : kernel_contracts())
        for (const CheckShape& s : contract->check_shapes)
            for (DType d : s.dtypes.empty() ? contract->dtypes : s.dtypes)
                cases.push_back({contract->name, s.shape, d, s.defines});
    return cases;
}

Defines check_defines(const CheckCase& c) {
    return merge_defines(kernel_contract(c.kernel).defines, c.defines);
}

CasePlan check_plan(const CheckCase& c) {
    const KernelContract& contract = kernel_contract(c.kernel);
    return plan_case(contract, parse_shape(contract, c.shape), c.dtype, check_defines(c));
}

Defines check_reference_defines(const CheckCase& c) {
    return with_reference_defines(kernel_contract(c.kernel), check_defines(c));
}

std::vector<KernelSpec> check_specs(std::span<const CheckCase> cases) {
    std::vector<KernelSpec> specs;
    const auto add = [&](KernelSpec spec) {
        if (std::none_of(specs.begin(), specs.end(),
                         [&](const KernelSpec& s) { return s.name == spec.name; }))
            specs.push_back(std::move(spec));
    };
    for (const CheckCase& c : cases) {
        const KernelContract& contract = kernel_contract(c.kernel);
        add(case_spec(contract, check_defines(c)));
        if (contract.reference.empty())
            add(case_spec(contract, check_reference_defines(c)));
    }
    return specs;
}

OutputCheck compare_output(const HostBuffer& got, std::span<const double> want, double tolerance) {
    OutputCheck o;
    o.name = got.name;
    // The canary is a NaN: an unwritten element already makes the error infinite; the count
    // says why.
    o.error = relative_l2(element_values(got), want);
    o.tolerance = tolerance;
    o.unwritten = find_unwritten(got).count;
    return o;
}

CheckResult run_check_case(Engine& engine, const CheckCase& c, std::uint64_t seed) {
    const KernelContract& contract = kernel_contract(c.kernel);
    const Defines defines = check_defines(c);
    const CasePlan plan = check_plan(c);
    // Without a float64 reference the same pipeline under the reference defines is run on the
    // same inputs: the buffers serve both plans.
    std::optional<CasePlan> ref_plan;
    if (contract.reference.empty())
        ref_plan = plan_case(contract, parse_shape(contract, c.shape), c.dtype,
                             check_reference_defines(c));
    const CasePlan capacity =
        ref_plan ? buffer_capacity(std::vector<CasePlan>{plan, *ref_plan}) : plan;
    const std::vector<HostBuffer> inputs = generated_inputs(capacity, seed);
    CaseBuffers buffers(capacity, inputs);
    const PreparedArm arm{&engine, case_spec(contract, defines).name, defines, {}, nullptr};
    const std::vector<HostBuffer> got = run_case_once(arm, plan, buffers);
    std::vector<std::vector<double>> want;
    if (!contract.reference.empty()) {
        // The reference sees exactly the values the kernel read (bf16-rounded where bf16).
        want = reference_outputs(plan, inputs);
    } else {
        // The same pipeline with the reference defines, on the same inputs.
        const Defines ref_defines = check_reference_defines(c);
        const PreparedArm ref_arm{
            &engine, case_spec(contract, ref_defines).name, ref_defines, {}, nullptr};
        for (HostBuffer out : run_case_once(ref_arm, *ref_plan, buffers)) {
            if (const Unwritten u = find_unwritten(out); u.count > 0)
                throw Error("the reference (" + defines_text(contract.reference_defines) +
                            ") left " + std::to_string(u.count) + " elements of " + out.name +
                            " unwritten: it cannot check anything");
            want.push_back(element_values(out));
        }
    }

    CheckResult r;
    r.kernel = contract.name;
    r.entry = plan.entry();
    r.shape = shape_text(contract, plan.shape);
    r.defines = defines_text(defines);
    // The launch reports describe (the contract's main one), as the sweep table shows it.
    r.grid = plan.main_launch().grid.str();
    r.block = plan.main_launch().block.str();
    r.reference = contract.reference.empty() ? defines_text(contract.reference_defines) : "float64";
    for (std::size_t i = 0; i < got.size(); ++i)
        r.outputs.push_back(
            compare_output(got[i], want[i], output_tolerance(plan.buffers[plan.outputs[i]])));
    return r;
}

CheckOutcome try_check_case(Engine& engine, const CheckCase& c, std::uint64_t seed) {
    try {
        return {run_check_case(engine, c, seed), {}};
    } catch (const Error& e) {
        return {std::nullopt, e.what()};
    }
}

} // namespace kjit
