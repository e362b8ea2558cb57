// kjit's kernel contracts: each one's buffers, scalars, launch geometry and bytes, its shapes,
// its generated inputs, its float64 reference, and the check cases `kjit check` runs from them.
#include "jit/hash.hpp"
#include "kernels/inputs.hpp"
#include "kernels/numeric.hpp"
#include "kernels/reference.hpp"
#include "kernels/references.hpp"
#include "kernels/registry.hpp"
#include "tests/support.hpp"
#include "tuning/case_arms.hpp"
#include "tuning/digest.hpp"
#include "tuning/numeric.hpp"
#include "tuning/selfcheck.hpp"

#include "tests/doctest.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace kjit;

namespace {

std::vector<std::string> names(const CasePlan& p, const std::vector<std::size_t>& buffers) {
    std::vector<std::string> out;
    for (std::size_t b : buffers)
        out.push_back(p.buffers[b].name);
    return out;
}

CasePlan plan_at(const std::string& kernel, const std::string& shape, DType dtype,
                 const Defines& defines = {}, const LaunchValues& launch = {}) {
    const KernelContract& c = kernel_contract(kernel);
    return plan_case(c, parse_shape(c, shape), dtype, defines, launch);
}

/// Runs the contract's reference on `inputs` at `shape` in its first dtype.
std::vector<std::vector<double>> adapter(const std::string& kernel, const std::string& shape,
                                         const Defines& defines,
                                         const std::vector<std::vector<double>>& inputs) {
    return reference_outputs(plan_at(kernel, shape, kernel_contract(kernel).dtypes.front(), defines),
                             std::span<const std::vector<double>>(inputs));
}

std::string hex_digest(const HostBuffer& b) {
    return hex64(digest(b));
}

/// x [b, c, t], w, bias and a carry-in state of smooth values, for the conv1d references.
std::array<std::vector<double>, 4> conv1d_values(int b, int c, int t) {
    std::vector<double> x(b * c * t), w(c * 4), bias(c), state(b * c * 3);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = std::sin(0.7 * static_cast<double>(i));
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = std::cos(1.3 * static_cast<double>(i));
    for (std::size_t i = 0; i < bias.size(); ++i)
        bias[i] = 0.1 * static_cast<double>(i) - 0.2;
    for (std::size_t i = 0; i < state.size(); ++i)
        state[i] = 0.5 - 0.05 * static_cast<double>(i);
    return {x, w, bias, state};
}

} // namespace

TEST_SUITE("cases") {

TEST_CASE("the conv1d contract reads x w bias state_in and writes y and state_out") {
    const KernelContract& kc = kernel_contract("conv1d");
    CHECK(kc.dtypes == std::vector<DType>{DType::f32, DType::bf16});
    CHECK(defines_text(kc.defines) ==
          "CONV_BLOCK=64 CONV_FLAT=0 CONV_SEGS=0 CONV_SILU=1 CONV_TILE=16");
    const CasePlan f = plan_at("conv1d", kc.bench_shape, DType::f32);
    CHECK(f.entry() == "conv1d_f32");
    CHECK(names(f, f.inputs) == std::vector<std::string>{"x", "w", "bias", "state_in"});
    CHECK(names(f, f.outputs) == std::vector<std::string>{"y", "state_out"});
    const double x = 8.0 * 4096 * 1300, states = 8.0 * 4096 * 3;
    CHECK(f.buffers[f.inputs[0]].count == x);
    CHECK(f.buffers[f.inputs[1]].count == 4096 * 4);
    CHECK(f.buffers[f.inputs[2]].count == 4096);
    CHECK(f.buffers[f.inputs[3]].count == states);
    CHECK(f.buffers[f.outputs[0]].count == x);
    CHECK(f.buffers[f.outputs[1]].count == states);
    // Read x, write y, plus w (4 per channel), bias and both states.
    CHECK(f.bytes == (2 * x + 5 * 4096 + 2 * states) * 4);
    CHECK(f.flops == 8 * x);
    // fp32: a warp per segment of 32 * CONV_TILE steps: 8 * 4096 rows of 3 segments, 2 warps
    // per block.
    REQUIRE(f.steps.size() == 1);
    CHECK(f.main_launch().grid.str() == "(" + std::to_string(8 * 4096 * 3 / 2) + ",1,1)");
    // bf16: a warp per 4 segments; rows of 20 segments take 5 warps. CONV_SEGS sets it.
    CHECK(plan_at("conv1d", "b=2,c=3,t=10000", DType::bf16).main_launch().grid.x == 2 * 3 * 5 / 2);
    CHECK(plan_at("conv1d", "b=2,c=3,t=10000", DType::f32).main_launch().grid.x == 2 * 3 * 20 / 2);
    CHECK_THROWS_AS(plan_at("conv1d", "b=1,c=1,t=2147483136", DType::f32), ConfigError);
    CHECK(plan_at("conv1d", "b=1,c=1,t=2147483136", DType::f32, {{"CONV_TILE", "8"}})
              .main_launch()
              .grid.x > 0);
    CHECK(plan_at("conv1d", "b=2,c=3,t=10000", DType::f32, {{"CONV_SEGS", "2"}})
              .main_launch()
              .grid.x == 2 * 3 * 10 / 2);
    // CONV_FLAT: segments cut from the rows laid end to end where rows are whole chunks (4
    // fp32 steps; 8 bf16 steps at tiles of 8 and more, else 4). 32 x 1024 rows of 64 fp32 steps
    // at CONV_TILE 4 are 16384 segments of 128 steps, 8 to a warp, 8 warps to a block.
    const Defines flat{{"CONV_FLAT", "1"}, {"CONV_TILE", "4"}, {"CONV_SEGS", "8"},
                       {"CONV_BLOCK", "256"}};
    CHECK(plan_at("conv1d", "b=32,c=1024,t=64", DType::f32, flat).main_launch().grid.x == 256);
    // A row of 61 steps is no whole chunks: a segment per row.
    CHECK(plan_at("conv1d", "b=32,c=1024,t=61", DType::f32, flat).main_launch().grid.x == 512);
    // bf16 rows of 12 steps: whole 4-step chunks at CONV_TILE 4, not whole 8-step ones at 16.
    CHECK(plan_at("conv1d", "b=32,c=1024,t=12", DType::bf16, flat).main_launch().grid.x ==
          32 * 1024 * 12 / 128 / 8 / 8);
    Defines flat16 = flat;
    flat16["CONV_TILE"] = "16";
    CHECK(plan_at("conv1d", "b=32,c=1024,t=12", DType::bf16, flat16).main_launch().grid.x ==
          32 * 1024 / 8 / 8);
    CHECK(f.main_launch().block.str() == "(64,1,1)");
    // 15 rows of one segment each: 15 warps, 2 per block of 64.
    CHECK(plan_at("conv1d", "b=3,c=5,t=37", DType::f32, {{"CONV_TILE", "16"}, {"CONV_BLOCK", "64"}})
              .main_launch()
              .grid.x == 8);
    REQUIRE(f.scalars.size() == 3);
    CHECK(f.scalars[0].value == 8);
    CHECK(f.scalars[1].value == 4096);
    CHECK(f.scalars[2].value == 1300);
    CHECK(f.main_launch().params.size() == 9);
    const CasePlan h = plan_at("conv1d", kc.bench_shape, DType::bf16);
    CHECK(h.entry() == "conv1d_bf16");
    CHECK(h.buffers[h.outputs[1]].dtype == DType::bf16);
    CHECK(h.bytes == f.bytes / 2);
    CHECK(output_tolerance(f.buffers[f.outputs[0]]) == 1e-6);
    CHECK(output_tolerance(h.buffers[h.outputs[0]]) == 1e-2);
}

TEST_CASE("the conv1d_update contract rolls the state in place from conv1d's source") {
    const KernelContract& kc = kernel_contract("conv1d_update");
    CHECK(kc.source_name() == "conv1d");
    CHECK(kc.dtypes == std::vector<DType>{DType::f32, DType::bf16});
    CHECK(defines_text(kc.defines) == "CONV_BLOCK=64 CONV_SILU=1");
    const CasePlan f = plan_at("conv1d_update", "b=3,c=37", DType::f32);
    CHECK(f.entry() == "conv1d_update_f32");
    CHECK(names(f, f.inputs) == std::vector<std::string>{"x", "w", "bias", "state"});
    // The state is read and written in place: an output too, restored before every check.
    CHECK(names(f, f.outputs) == std::vector<std::string>{"state", "y"});
    CHECK(f.buffers[f.inputs[3]].count == 3 * 37 * 3);
    CHECK(f.bytes == (2 * 3 * 37 + 5 * 37 + 2 * 3 * 37 * 3) * 4);
    // A thread per (batch, channel): 111 threads, two blocks of 64.
    CHECK(f.main_launch().grid.str() == "(2,1,1)");
    CHECK(f.main_launch().block.str() == "(64,1,1)");
    CHECK(f.main_launch().params.size() == 7);
    const CasePlan h = plan_at("conv1d_update", "b=1,c=8192", DType::bf16);
    CHECK(h.entry() == "conv1d_update_bf16");
    CHECK(h.main_launch().grid.x == 128);
}

TEST_CASE("the conv1d_update reference is one more step of the sequence reference") {
    // x over T + 1 steps through conv1d equals T steps and then one update of the carry.
    const int b = 2, c = 3, t = 5;
    const auto [x, w, bias, state0] = conv1d_values(b, c, t + 1);
    std::vector<double> y_all(x.size()), state_all(state0.size());
    conv1d_reference(x, w, bias, state0, y_all, state_all, b, c, t + 1, true);
    std::vector<double> head(b * c * t), last(b * c);
    for (int r = 0; r < b * c; ++r) {
        std::copy_n(x.begin() + r * (t + 1), t, head.begin() + r * t);
        last[r] = x[r * (t + 1) + t];
    }
    std::vector<double> y_head(head.size()), carry(state0.size());
    conv1d_reference(head, w, bias, state0, y_head, carry, b, c, t, true);
    const CasePlan plan = plan_at("conv1d_update", "b=2,c=3", DType::f32);
    const std::vector<std::vector<double>> inputs = {last, w, bias, carry};
    const auto out = reference_outputs(plan, std::span<const std::vector<double>>(inputs));
    CHECK(out[0] == state_all);
    for (int r = 0; r < b * c; ++r)
        CHECK(out[1][r] == y_all[r * (t + 1) + t]);
}

TEST_CASE("the conv1d_cl contract is conv1d channel-last from conv1d's source") {
    const KernelContract& kc = kernel_contract("conv1d_cl");
    CHECK(kc.source_name() == "conv1d");
    CHECK(defines_text(kc.defines) ==
          "CONV_BLOCK=64 CONV_CL_CH=4 CONV_CL_EAGER=1 CONV_CL_SEGS=1 CONV_CL_STEPS=16 CONV_SILU=1");
    const CasePlan f = plan_at("conv1d_cl", "b=8,c=4096,t=1300", DType::f32);
    CHECK(f.entry() == "conv1d_cl_f32");
    CHECK(names(f, f.inputs) == std::vector<std::string>{"x", "w", "bias", "state_in"});
    CHECK(names(f, f.outputs) == std::vector<std::string>{"y", "state_out"});
    CHECK(f.bytes == (2 * 8 * 4096 * 1300 + 5 * 4096 + 2 * 8 * 4096 * 3) * 4);
    // A thread per 4 channels and 16 steps: 8 x 82 x 1024 threads, 64 to a block.
    CHECK(f.main_launch().grid.x == 8 * 82 * 1024 / 64);
    // 4 channels a thread in either dtype: 2048 threads at 8192 channels.
    CHECK(plan_at("conv1d_cl", "b=1,c=8192,t=16", DType::bf16, {{"CONV_CL_STEPS", "16"}})
              .main_launch()
              .grid.x == 2048 / 64);
    // 3 x 2 x 3 threads (5 channels: two groups, the second of one channel), one block.
    CHECK(plan_at("conv1d_cl", "b=3,c=5,t=37", DType::f32, {{"CONV_CL_STEPS", "16"}})
              .main_launch()
              .grid.x == 1);
    CHECK(plan_at("conv1d_cl", "b=3,c=5,t=37", DType::bf16).entry() == "conv1d_cl_bf16");
    // 8 channels and two tiles of 8 steps a thread: 1024 groups x 82 spans x 8 batches (1300
    // steps are 81 spans of 16 and 4).
    CHECK(plan_at("conv1d_cl", "b=8,c=8192,t=1300", DType::bf16,
                  {{"CONV_CL_STEPS", "8"},
                   {"CONV_CL_CH", "8"},
                   {"CONV_CL_SEGS", "2"},
                   {"CONV_BLOCK", "128"}})
              .main_launch()
              .grid.x == 8 * 82 * 1024 / 128);
    // 5 channels at 8 a thread: one group, its last three channels past C.
    CHECK(plan_at("conv1d_cl", "b=3,c=5,t=37", DType::f32,
                  {{"CONV_CL_CH", "8"}, {"CONV_CL_SEGS", "4"}, {"CONV_BLOCK", "32"}})
              .main_launch()
              .grid.x == 1);
    // The precondition's bound follows the thread's span.
    CHECK_THROWS_WITH_AS(plan_at("conv1d_cl", "b=1,c=8,t=2147483600", DType::f32,
                                 {{"CONV_CL_STEPS", "32"}, {"CONV_CL_SEGS", "4"}}),
                         doctest::Contains("at most 2147483647 - CONV_CL_STEPS * CONV_CL_SEGS"),
                         ConfigError);
}

TEST_CASE("the channel-last reference is the row reference on the transposed tensors") {
    const int b = 2, c = 3, t = 5;
    const auto [x, w, bias, state] = conv1d_values(b, c, t);
    // [B, R, S] -> [B, S, R]
    const auto swap = [&](const std::vector<double>& v, int r, int s) {
        std::vector<double> out(v.size());
        for (int i = 0; i < b; ++i)
            for (int j = 0; j < r; ++j)
                for (int k = 0; k < s; ++k)
                    out[(i * s + k) * r + j] = v[(i * r + j) * s + k];
        return out;
    };
    std::vector<double> y(x.size()), out(state.size()), y_cl(x.size()), out_cl(state.size());
    conv1d_reference(x, w, bias, state, y, out, b, c, t, true);
    conv1d_reference(swap(x, c, t), w, bias, swap(state, c, 3), y_cl, out_cl, b, c, t, true, true);
    CHECK(y_cl == swap(y, c, t));
    CHECK(out_cl == swap(out, c, 3));
    // Through the contract's registered reference.
    const CasePlan plan = plan_at("conv1d_cl", "b=2,c=3,t=5", DType::f32);
    const std::vector<std::vector<double>> inputs = {swap(x, c, t), w, bias, swap(state, c, 3)};
    const auto ref = reference_outputs(plan, std::span<const std::vector<double>>(inputs));
    CHECK(ref[0] == y_cl);
    CHECK(ref[1] == out_cl);
}

TEST_CASE("the delta_rule contract updates the state in place") {
    const KernelContract& kc = kernel_contract("delta_rule");
    CHECK(kc.dtypes == std::vector<DType>{DType::f32});
    CHECK(defines_text(kc.defines) == "DR_BV=32 DR_KSPLIT=4 DR_MAX_DK=128 DR_VEC=1");
    const CasePlan l = plan_at("delta_rule", "b=2,h=3,dk=64,dv=100", DType::f32);
    CHECK(l.entry() == "delta_rule_decode");
    CHECK(names(l, l.inputs) == std::vector<std::string>{"q", "k", "v", "g", "beta", "state"});
    CHECK(names(l, l.outputs) == std::vector<std::string>{"state", "o"});
    CHECK(l.buffers[l.inputs[5]].role == ArgRole::in_out);
    const std::size_t heads = 6, state = heads * 64 * 100;
    CHECK(l.buffers[l.inputs[0]].count == heads * 64);
    CHECK(l.buffers[l.inputs[2]].count == heads * 100);
    CHECK(l.buffers[l.inputs[3]].count == heads);
    CHECK(l.buffers[l.inputs[5]].count == state);
    CHECK(l.buffers[l.outputs[1]].count == heads * 100);
    // The kernel reads and writes the state once; nothing restores it inside a run.
    CHECK(l.bytes == (2.0 * state + 2 * heads * 64 + 2 * heads * 100 + 2 * heads) * 4);
    CHECK(l.flops == 7.0 * state + heads * 64);
    CHECK(output_tolerance(l.buffers[l.outputs[0]]) == 1e-6);
    CHECK(output_tolerance(l.buffers[l.outputs[1]]) == 1e-5);
    REQUIRE(l.steps.size() == 1);
    CHECK(l.main_launch().grid.str() == "(4,6,1)");  // ceil(100 / DR_BV), b * h
    CHECK(l.main_launch().block.str() == "(32,4,1)"); // DR_BV / DR_VEC, DR_KSPLIT
    // DR_VEC columns per thread: the block narrows, the grid stays.
    const CasePlan wide = plan_at("delta_rule", "b=2,h=3,dk=64,dv=100", DType::f32,
                                  {{"DR_VEC", "4"}, {"DR_BV", "64"}});
    CHECK(wide.main_launch().grid.str() == "(2,6,1)");
    CHECK(wide.main_launch().block.str() == "(16,4,1)");
    // q k v g beta state o dk dv scale: the kernel's own parameter order.
    std::vector<std::string> params;
    for (const ParamRef& r : l.main_launch().params)
        params.push_back(r.scalar ? l.scalars[r.index].name : l.buffers[r.index].name);
    CHECK(params == std::vector<std::string>{"q", "k", "v", "g", "beta", "state", "o", "dk", "dv",
                                             "scale"});
    CHECK(l.find_scalar("scale")->value == static_cast<double>(0.125f));
    // A key width the register array cannot hold is refused, not truncated.
    CHECK_THROWS_WITH_AS(plan_at("delta_rule", "b=1,h=1,dk=66,dv=8", DType::f32),
                         "error: delta_rule: dk=66 must be a multiple of DR_KSPLIT=4 and at most "
                         "DR_MAX_DK=128",
                         ConfigError);
    CHECK_THROWS_AS(plan_at("delta_rule", "b=1,h=1,dk=64,dv=8", DType::bf16), ConfigError);
}

TEST_CASE("the rms_norm contract launches a block per row unless a launch parameter says fewer") {
    const CasePlan p = plan_at("rms_norm", "rows=8192,n=7168", DType::f32);
    CHECK(p.main_launch().grid.str() == "(8192,1,1)");
    CHECK(p.main_launch().block.str() == "(256,1,1)");
    CHECK(p.launch.at("ROWS_PER_LAUNCH") == 8192);
    CHECK(p.find_scalar("eps")->value == static_cast<double>(1e-6f));
    const CasePlan q =
        plan_at("rms_norm", "rows=8192,n=7168", DType::f32, {{"RMS_BLOCK", "1024"}},
                {{"ROWS_PER_LAUNCH", 2048}});
    CHECK(q.main_launch().grid.str() == "(2048,1,1)");
    CHECK(q.main_launch().block.str() == "(1024,1,1)");
    CHECK_THROWS_WITH_AS(plan_at("rms_norm", "rows=1,n=8", DType::f32, {}, {{"GRID", 4}}),
                         "error: rms_norm: no launch parameter 'GRID' (known: ROWS_PER_LAUNCH)",
                         ConfigError);
    CHECK_THROWS_AS(plan_at("rms_norm", "rows=1,n=8", DType::f32, {{"RMS_BLOCK", "wide"}}),
                    ConfigError);
    // Shapes past the kernel's 32-bit counters are refused with the reason, not run wrong.
    CHECK(plan_at("rms_norm", "rows=1073741824,n=1", DType::bf16).main_launch().grid.str() ==
          "(1073741824,1,1)");
    CHECK_THROWS_WITH_AS(plan_at("rms_norm", "rows=1073741825,n=1", DType::bf16),
                         "error: rms_norm: rows=1073741825 is past the kernel's 32-bit row "
                         "counter: a row index plus the grid's stride must fit an int (rows <= "
                         "1073741824 for a block per row)",
                         PreconditionError);
    // Eight warps of eight rows per block: 64 rows a block.
    CHECK_THROWS_AS(plan_at("rms_norm", "rows=1073741793,n=1", DType::bf16,
                            {{"RMS_WARP_ROWS", "8"}}),
                    PreconditionError);
    CHECK(plan_at("rms_norm", "rows=1073741792,n=1", DType::bf16, {{"RMS_WARP_ROWS", "8"}})
              .main_launch()
              .grid.str() == "(16777216,1,1)");
    CHECK(plan_at("rms_norm", "rows=1,n=2147483392", DType::f32).main_launch().grid.str() ==
          "(1,1,1)");
    CHECK_THROWS_WITH_AS(plan_at("rms_norm", "rows=1,n=2147483393", DType::f32),
                         "error: rms_norm: n=2147483393 is past the kernel's 32-bit column "
                         "counter: at most 2147483648 - RMS_BLOCK=256",
                         PreconditionError);
}

TEST_CASE("shapes parse on the keys of every contract and mistakes are named") {
    const KernelContract& conv = kernel_contract("conv1d");
    const ShapeValues s = parse_shape(conv, "t=37, b=2,c=64");
    CHECK(s.at("b") == 2);
    CHECK(s.at("c") == 64);
    CHECK(s.at("t") == 37);
    CHECK(shape_text(conv, s) == "b=2,c=64,t=37");
    CHECK_THROWS_WITH_AS(parse_shape(conv, "b=2,c=64"),
                         "error: bad shape 'b=2,c=64': t is missing (expected b=N,c=N,t=N)",
                         ConfigError);
    const KernelContract& dr = kernel_contract("delta_rule");
    CHECK(shape_text(dr, parse_shape(dr, "dv=100,dk=64,h=3,b=2")) == "b=2,h=3,dk=64,dv=100");
    CHECK_THROWS_WITH_AS(parse_shape(dr, "b=1,h=32,dk=128,d=128"),
                         "error: bad shape 'b=1,h=32,dk=128,d=128': delta_rule has no shape key "
                         "'d' (expected b=N,h=N,dk=N,dv=N)",
                         ConfigError);
    for (const KernelContract* kc : kernel_contracts()) {
        INFO(kc->name);
        CHECK_NOTHROW(validate_contract(*kc));
        CHECK_NOTHROW(parse_shape(*kc, kc->bench_shape));
        for (const std::string& shape : kc->digest_shapes)
            CHECK_NOTHROW(plan_case(*kc, parse_shape(*kc, shape), kc->dtypes.front()));
        const bool has_reference = find_reference(kc->reference) != nullptr;
        CHECK(has_reference);
    }
    CHECK(kernel_contract("conv1d").digest_shapes ==
          std::vector<std::string>{"b=1,c=4,t=8", "b=2,c=64,t=37", "b=2,c=256,t=1300"});
}

TEST_CASE("scaled inputs keep the decay negative and the gate below one and unscaled inputs "
          "keep their bits") {
    const CasePlan l = plan_at("delta_rule", "b=4,h=64,dk=128,dv=128", DType::f32);
    const std::vector<HostBuffer> in = generated_inputs(l, 1);
    REQUIRE(in.size() == 6);
    for (double g : element_values(in[3])) {
        CHECK(g >= -0.15);
        CHECK(g < -0.05);
    }
    for (double beta : element_values(in[4])) {
        CHECK(beta >= 0.0);
        CHECK(beta < 1.0);
    }
    for (double k : element_values(in[1]))
        CHECK(std::abs(k) <= 1.0 / std::sqrt(128.0) * (1 + 1e-6)); // an fp32 scale
    // Input k of set s comes from seed + s * inputs + k; unscaled, generated_buffer's bits.
    CHECK(in[2].bytes ==
          generated_buffer("v", DType::f32, l.buffers[l.inputs[2]].count, 1 + 2).bytes);
    CHECK(generated_inputs(l, 1, 1)[0].bytes ==
          generated_buffer("q", DType::f32, l.buffers[l.inputs[0]].count, 1 + 6).bytes);
    for (DType d : {DType::f32, DType::bf16})
        CHECK(generated_input({"x", d, 1000}, 5).bytes == generated_buffer("x", d, 1000, 5).bytes);
    const HostBuffer h = generated_input({"g", DType::bf16, 4, 0.5f, -2.0f}, 1);
    CHECK(element_values(h)[0] == from_bf16(to_bf16(uniform(1, 0) * 0.5f - 2.0f)));
}

TEST_CASE("the key scale is the fp32 1 / sqrtf(dk) and the attention scale the rounded double") {
    for (int dk = 4; dk <= 1024; dk += 4) {
        INFO("dk " << dk);
        const CasePlan l = plan_at("delta_rule", "b=1,h=1,dk=" + std::to_string(dk) + ",dv=4",
                                   DType::f32, {{"DR_MAX_DK", "1024"}});
        CHECK(l.find_buffer("k")->scale == 1.0f / std::sqrt(static_cast<float>(dk)));
        CHECK(l.find_scalar("scale")->value ==
              static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk))));
    }
}

TEST_CASE("the contracts generate the input bits the recorded baselines were made from") {
    // Digests of the inputs the recorded baselines were made from (before kernels/ existed).
    CasePlan p = plan_at("delta_rule", "b=2,h=3,dk=64,dv=100", DType::f32);
    std::vector<HostBuffer> in = generated_inputs(p, 1);
    CHECK(hex_digest(in[1]) == "2d4854488fb47f68"); // k, scaled
    CHECK(hex_digest(in[3]) == "336a38c053d1851f"); // g, scaled and offset
    CHECK(hex_digest(in[4]) == "0c2718ba4cba3ce7"); // beta
    CHECK(hex_digest(in[5]) == "ac929fbb32468551"); // state
    CHECK(hex_digest(generated_inputs(p, 1, 1)[1]) == "33c3986847ae65be");
    p = plan_at("conv1d", "b=2,c=64,t=37", DType::bf16);
    in = generated_inputs(p, 1);
    CHECK(hex_digest(in[0]) == "e43f690bff3b450b");
    CHECK(hex_digest(in[3]) == "1c51bd81d2fb97c7");
    p = plan_at("rms_norm", "rows=1,n=7168", DType::f32);
    in = generated_inputs(p, 7);
    CHECK(hex_digest(in[0]) == "e132564b2630aca6");
    CHECK(hex_digest(in[1]) == "bab32fe34bc417bb");
}

TEST_CASE("the conv1d reference is conv1d_reference on a worked example") {
    const KernelContract& kc = kernel_contract("conv1d");
    // One row: state [1 2 3], x [4 5], w [1 10 100 1000], bias 0.5.
    const std::vector<std::vector<double>> in = {{4, 5}, {1, 10, 100, 1000}, {0.5}, {1, 2, 3}};
    const Defines linear = merge_defines(kc.defines, std::vector<std::string>{"CONV_SILU=0"});
    auto out = adapter("conv1d", "b=1,c=1,t=2", linear, in);
    CHECK(out[0] == std::vector<double>{0.5 + 1 + 20 + 300 + 4000, 0.5 + 2 + 30 + 400 + 5000});
    CHECK(out[1] == std::vector<double>{3, 4, 5});
    out = adapter("conv1d", "b=1,c=1,t=2", kc.defines, in);
    std::vector<double> y(2), state(3);
    conv1d_reference(in[0], in[1], in[2], in[3], y, state, 1, 1, 2, true);
    CHECK(out[0] == y);
    CHECK(out[1] == state);
    CHECK(out[0][1] == doctest::Approx(5432.5 / (1 + std::exp(-5432.5))));
}

TEST_CASE("the delta_rule reference steps the state") {
    const KernelContract& kc = kernel_contract("delta_rule");
    // b=1 h=1 dk=4 dv=3: the scale 1/sqrt(4) is exact.
    const std::vector<double> q{1, 2, 3, 4}, k{0.1, 0.2, 0.3, 0.4}, v{5, 6, 7}, g{-0.1},
        beta{0.5}, state0{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
    const auto out = adapter("delta_rule", "b=1,h=1,dk=4,dv=3", kc.defines,
                             {q, k, v, g, beta, state0});
    std::vector<double> state = state0, o(3);
    delta_rule_reference(q, k, v, g, beta, state, o, 1, 4, 3, 0.5);
    CHECK(out[0] == state); // the in-out state, then o
    CHECK(out[1] == o);
    CHECK(out[0] != state0);
    // Column 0 of the decayed state is e^-0.1 [1 0 0 1]: S^T k = 0.5 e^-0.1.
    const double e = std::exp(-0.1), u = 0.5 * (5 - 0.5 * e);
    CHECK(out[0][0] == doctest::Approx(e + 0.1 * u));
}

TEST_CASE("the rms_norm reference is rms_norm_reference at the epsilon the kernel receives") {
    const KernelContract& kc = kernel_contract("rms_norm");
    const std::vector<double> x{3, 4, 1, 1}, w{1, 2};
    const auto out = adapter("rms_norm", "rows=2,n=2", kc.defines, {x, w});
    std::vector<double> y(4);
    rms_norm_reference(x, w, y, 2, 2, 1e-6f);
    CHECK(out[0] == y);
}

TEST_CASE("reference_outputs gives the reference the bf16-rounded values the kernel reads") {
    const CasePlan plan = plan_at("conv1d", "b=2,c=3,t=5", DType::bf16);
    const std::vector<HostBuffer> in = generated_inputs(plan, 9);
    const auto out = reference_outputs(plan, in);
    REQUIRE(out.size() == 2);
    const std::vector<double> x = element_values(in[0]);
    CHECK(x[0] == from_bf16(to_bf16(uniform(9, 0))));
    std::vector<double> y(30), state(18);
    conv1d_reference(x, element_values(in[1]), element_values(in[2]), element_values(in[3]), y,
                     state, 2, 3, 5, true);
    CHECK(out[0] == y);
    CHECK(out[1] == state);
}

TEST_CASE("an output check fails on unwritten elements and on errors over the tolerance") {
    for (DType d : {DType::f32, DType::bf16}) {
        INFO(dtype_name(d));
        const HostBuffer got = generated_buffer("y", d, 100, 3);
        const std::vector<double> want = element_values(got);
        OutputCheck o = compare_output(got, want, 1e-6);
        CHECK(o.name == "y");
        CHECK(o.error == 0);
        CHECK(o.passed());
        std::vector<double> off = want;
        off[7] += 1.0;
        o = compare_output(got, off, 1e-6);
        CHECK(o.error > 1e-6);
        CHECK_FALSE(o.passed());
        CHECK(o.unwritten == 0);
        HostBuffer partial = got;
        const HostBuffer canary = canary_buffer("y", d, 100);
        std::memcpy(partial.bytes.data() + 42 * dtype_size(d),
                    canary.bytes.data() + 42 * dtype_size(d), dtype_size(d));
        o = compare_output(partial, want, 1.0);
        CHECK(o.unwritten == 1);
        CHECK(o.error == std::numeric_limits<double>::infinity());
        CHECK_FALSE(o.passed());
    }
}

TEST_CASE("the default check cases cover every contract in every dtype and are all launchable") {
    const std::vector<CheckCase> cases = default_check_cases();
    for (const KernelContract* kc : kernel_contracts())
        for (DType d : kc->dtypes) {
            INFO(kc->name << " " << dtype_name(d));
            std::set<std::string> shapes;
            for (const CheckCase& c : cases)
                if (c.kernel == kc->name && c.dtype == d)
                    shapes.insert(c.shape);
            CHECK(shapes.size() >= 2);
            CHECK(shapes.contains(kc->name == "rms_norm" ? "rows=4096,n=7168" : kc->bench_shape));
        }
    std::set<std::string> spec_names;
    for (const CheckCase& c : cases) {
        INFO(c.kernel << " " << c.shape);
        const KernelContract& kc = kernel_contract(c.kernel);
        CHECK(std::find(kc.dtypes.begin(), kc.dtypes.end(), c.dtype) != kc.dtypes.end());
        CHECK_NOTHROW(check_plan(c));
        spec_names.insert(case_spec(kc, check_defines(c)).name);
    }
    const std::vector<KernelSpec> specs = check_specs(cases);
    CHECK(specs.size() == spec_names.size());
    CHECK(specs.front().name == "rms_norm/RMS_BLOCK=256/RMS_WARP_ROWS=0");
    CHECK(check_defines({"conv1d", "b=3,c=5,t=37", DType::f32, {"CONV_SILU=0"}}) ==
          Defines{{"CONV_BLOCK", "64"},
                  {"CONV_FLAT", "0"},
                  {"CONV_SEGS", "0"},
                  {"CONV_SILU", "0"},
                  {"CONV_TILE", "16"}});
    CHECK(cases.size() == 31);           // conv1d_cl: + its eager path at 2 shapes x 2 dtypes
    CHECK(cases[4].dtype == DType::f32); // rms_norm's five f32 cases, then its bf16 ones
    CHECK(cases[5].dtype == DType::bf16);
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("every check case passes on fresh random inputs") {
    KJIT_REQUIRE_DEVICE();
    KJIT_TEST_RANDOM_SEED(seed);
    test::GpuEngine gpu;
    Engine& engine = gpu.engine;
    const std::vector<CheckCase> cases = default_check_cases();
    for (const auto& row : engine.prepare({}, check_specs(cases)))
        REQUIRE_FALSE(row.error);
    for (const CheckCase& c : cases) {
        const CheckResult r = run_check_case(engine, c, seed);
        for (const OutputCheck& o : r.outputs) {
            INFO(r.entry << "/" << o.name << " " << r.shape << " " << r.defines << " unwritten "
                         << o.unwritten);
            CHECK(o.error <= o.tolerance);
            CHECK(o.unwritten == 0);
        }
    }
}

TEST_CASE("repeated delta_rule launches step the state on and every run starts from the generated state") {
    KJIT_REQUIRE_DEVICE();
    test::GpuEngine gpu;
    const Device& device = gpu.device;
    Engine& engine = gpu.engine;
    const KernelContract& kc = kernel_contract("delta_rule");
    const CasePlan plan = plan_at("delta_rule", "b=2,h=3,dk=64,dv=100", DType::f32);
    const auto arms = prepare_arms(engine, kc, {kc.defines}, device);
    CaseBuffers buffers(plan, 1);
    const auto once = run_case_once(arms[0], plan, buffers);
    // Two more launches on the same buffers: the state of three steps, as a decode chain's.
    const Stream stream;
    const LaunchSequence launch = case_launch(arms[0], plan, buffers);
    for (int i = 0; i < 2; ++i)
        launch(stream.handle());
    stream.synchronize();
    const auto thrice = buffers.download();
    REQUIRE(thrice[0].name == "state");
    CHECK(digest(thrice[0]) != digest(once[0]));
    // The contract's float64 reference over the same three steps, each step's state (its first
    // output) the next one's input.
    std::vector<std::vector<double>> in;
    for (const HostBuffer& h : generated_inputs(plan, 1))
        in.push_back(element_values(h));
    for (int i = 0; i < 3; ++i)
        in[5] = reference_outputs(plan, std::span<const std::vector<double>>(in))[0];
    CHECK(relative_l2(element_values(thrice[0]), in[5]) < 1e-6);
    // And a run of the case starts again from the generated state.
    const auto again = run_case_once(arms[0], plan, buffers);
    for (std::size_t i = 0; i < once.size(); ++i) {
        INFO(once[i].name);
        CHECK(digest(again[i]) == digest(once[i]));
    }
    // A key width the register array cannot hold is refused, not truncated.
    CHECK_THROWS_AS(plan_at("delta_rule", "b=1,h=1,dk=66,dv=8", DType::f32), ConfigError);
}

} // TEST_SUITE
