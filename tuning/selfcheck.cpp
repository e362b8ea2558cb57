#include "tuning/selfcheck.hpp"

#include "tuning/numeric.hpp"

#include <algorithm>

namespace kjit {

bool CheckResult::passed() const {
    return std::all_of(outputs.begin(), outputs.end(),
                       [](const OutputCheck& o) { return o.passed(); });
}

std::vector<CheckCase> default_check_cases() {
    std::vector<CheckCase> cases;
    for (DType d : {DType::f32, DType::bf16}) {
        // Prefill, decode with a full-width block, and a width that is no multiple of the block.
        cases.push_back({"rms_norm", "rows=4096,n=7168", d, {"RMS_BLOCK=256"}});
        cases.push_back({"rms_norm", "rows=1,n=7168", d, {"RMS_BLOCK=1024"}});
        cases.push_back({"rms_norm", "rows=333,n=1000", d, {"RMS_BLOCK=128"}});
    }
    for (DType d : {DType::f32, DType::bf16}) {
        // Production, then a length no tile divides over an odd channel count (the scalar path).
        cases.push_back({"conv1d", "b=8,c=4096,t=1300", d});
        cases.push_back({"conv1d", "b=3,c=5,t=37", d});
    }
    // The reference must follow the activation knob.
    cases.push_back({"conv1d", "b=3,c=5,t=37", DType::f32, {"CONV_SILU=0"}});
    // Production decode, then a value width no tile divides and a smaller key width.
    cases.push_back({"delta_rule", "b=1,h=32,dk=128,dv=128", DType::f32});
    cases.push_back({"delta_rule", "b=2,h=3,dk=64,dv=100", DType::f32});
    return cases;
}

Defines check_defines(const CheckCase& c) {
    return merge_defines(kernel_case(c.kernel).defines, c.defines);
}

std::vector<KernelSpec> check_specs(std::span<const CheckCase> cases) {
    std::vector<KernelSpec> specs;
    for (const CheckCase& c : cases) {
        KernelSpec spec = case_spec(kernel_case(c.kernel), check_defines(c));
        if (std::none_of(specs.begin(), specs.end(),
                         [&](const KernelSpec& s) { return s.name == spec.name; }))
            specs.push_back(std::move(spec));
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
    const KernelCase& kc = kernel_case(c.kernel);
    const ShapeValues shape = parse_shape(kc, c.shape);
    const Defines defines = check_defines(c);
    const CaseLayout layout = kc.layout(shape, c.dtype);
    const std::vector<HostBuffer> inputs = generated_inputs(layout, seed);
    CaseBuffers buffers(layout, inputs);
    const PreparedArm arm{&engine, case_spec(kc, defines).name, defines, {}};
    LaunchConfig config;
    const std::vector<HostBuffer> got = run_case_once(kc, arm, shape, buffers, &config);
    // The reference sees exactly the values the kernel read (bf16-rounded where bf16).
    const std::vector<std::vector<double>> want =
        reference_outputs(kc, shape, defines, layout, inputs);

    CheckResult r;
    r.kernel = kc.kernel;
    r.entry = layout.entry;
    r.shape = shape_text(kc, shape);
    r.defines = defines_text(defines);
    r.grid = config.grid.str();
    r.block = config.block.str();
    for (std::size_t i = 0; i < got.size(); ++i)
        r.outputs.push_back(compare_output(got[i], want[i], output_tolerance(layout.outputs[i])));
    return r;
}

} // namespace kjit
