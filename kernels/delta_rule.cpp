// delta_rule (kernel_src/delta_rule.cu): its contract and its float64 reference.
#include "kernels/builtin.hpp"
#include "kernels/reference.hpp"
#include "kernels/references.hpp"

#include <algorithm>
#include <cmath>

namespace kjit {

void delta_rule_reference(std::span<const double> q, std::span<const double> k,
                          std::span<const double> v, std::span<const double> g,
                          std::span<const double> beta, std::span<double> state,
                          std::span<double> o, int heads, int dk, int dv, double scale) {
    for (int h = 0; h < heads; ++h) {
        double* s = state.data() + static_cast<long long>(h) * dk * dv;
        const double decay = std::exp(g[h]);
        for (int i = 0; i < dk * dv; ++i)
            s[i] *= decay;
        for (int j = 0; j < dv; ++j) {
            double sk = 0;
            for (int i = 0; i < dk; ++i)
                sk += s[i * dv + j] * k[h * dk + i];
            const double u = beta[h] * (v[h * dv + j] - sk);
            double out = 0;
            for (int i = 0; i < dk; ++i) {
                s[i * dv + j] += k[h * dk + i] * u;
                out += s[i * dv + j] * q[h * dk + i] * scale;
            }
            o[h * dv + j] = out;
        }
    }
}

namespace detail {

void delta_rule_reference_io(ReferenceIo& io) {
    // The state before the step (the in-out buffer's input, held apart from its output) is
    // updated in a copy: the output.
    const std::span<const double> before = io.input("state");
    const std::span<double> state = io.output("state");
    std::copy(before.begin(), before.end(), state.begin());
    delta_rule_reference(
        io.input("q"), io.input("k"), io.input("v"), io.input("g"), io.input("beta"), state,
        io.output("o"), static_cast<int>(io.shape("b") * io.shape("h")),
        static_cast<int>(io.shape("dk")), static_cast<int>(io.shape("dv")), io.scalar("scale"));
}

KernelContract delta_rule_contract() {
    KernelContract c;
    c.name = "delta_rule";
    c.shape_keys = {"b", "h", "dk", "dv"};
    c.dtypes = {DType::f32};
    // DR_VEC (columns per thread) and DR_DK / DR_DV (the widths compiled in) leave the bits as
    // they are: the tuned table picks them per shape.
    c.defines = {{"DR_BV", "32"}, {"DR_KSPLIT", "4"}, {"DR_MAX_DK", "128"}, {"DR_VEC", "1"}};
    // Keys of norm about 1/sqrt(3) (as normalised keys are) keep beta k^T k below 1, so the
    // update contracts; g < 0 is a decay; beta is a gate in [0, 1). The key scale is the fp32
    // 1 / sqrtf(dk).
    //
    // The state is updated in place, as a decode chain keeps it: every run of a case starts
    // from the generated state (restored before it), and repeated launches (a bench's calls, a
    // graph) step it on, so a bench times the step alone.
    ContractArg state = input_arg("state", "b * h * dk * dv");
    state.role = ArgRole::in_out;
    c.args = {
        input_arg("q", "b * h * dk"),
        input_arg("k", "b * h * dk", "1 / f32(sqrt(dk))"),
        input_arg("v", "b * h * dv"),
        input_arg("g", "b * h", "0.05", "-0.1"),
        input_arg("beta", "b * h", "0.5", "0.5"),
        state,
        output_arg("o", "b * h * dv", 1e-5),
        scalar_arg("dk", ArgType::i32, "dk"),
        scalar_arg("dv", ArgType::i32, "dv"),
        scalar_arg("scale", ArgType::f32, "1 / sqrt(dk)"),
    };
    // Each thread holds dk / DR_KSPLIT rows in a register array of DR_MAX_DK / DR_KSPLIT: any
    // other dk would drop rows silently.
    c.preconditions = {{"dk % DR_KSPLIT == 0 && dk <= DR_MAX_DK",
                        "dk={dk} must be a multiple of DR_KSPLIT={DR_KSPLIT} and at most "
                        "DR_MAX_DK={DR_MAX_DK}"}};
    c.pipeline = {
        launch_step({{DType::f32, "delta_rule_decode"}}, {"ceil_div(dv, DR_BV)", "b * h"},
                    {"DR_BV / DR_VEC", "DR_KSPLIT"},
                    {"q", "k", "v", "g", "beta", "state", "o", "dk", "dv", "scale"}),
    };
    // The state read and written once, plus the vectors; per state element a multiply (decay)
    // and an FMA each for S^T k, the update and S^T q; per key element the q * scale multiply.
    c.bytes = "(2 * b * h * dk * dv + 2 * b * h * dk + 2 * b * h * dv + 2 * b * h) * dtype_size";
    c.flops = "7 * b * h * dk * dv + b * h * dk";
    c.reference = "delta_rule";
    c.bench_shape = "b=1,h=32,dk=128,dv=128";
    // Production decode, then a value width no tile divides and a smaller key width.
    c.check_shapes = {{"b=1,h=32,dk=128,dv=128", {}, {}}, {"b=2,h=3,dk=64,dv=100", {}, {}}};
    c.digest_shapes = {"b=1,h=32,dk=128,dv=128", "b=2,h=3,dk=64,dv=100"};
    return c;
}

} // namespace detail
} // namespace kjit
