// The kernels against their float64 references on fresh random inputs (outputs poisoned
// first), and the bit-identity each one claims, checked as bytes. Every launch takes its
// geometry, buffers and scalars from the kernel's contract.
#include "kernels/inputs.hpp"
#include "kernels/reference.hpp"
#include "kernels/references.hpp"
#include "kernels/registry.hpp"
#include "runtime/buffer.hpp"
#include "runtime/driver.hpp"
#include "runtime/launch.hpp"
#include "runtime/stream.hpp"
#include "tests/support.hpp"
#include "tuning/case_arms.hpp"
#include "tuning/digest.hpp"
#include "tuning/numeric.hpp"

#include "tests/doctest.hpp"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

using namespace kjit;

namespace {

CasePlan plan_at(const std::string& kernel, const std::string& shape, DType dtype,
                 const Defines& defines = {}, const LaunchValues& launch = {}) {
    const KernelContract& c = kernel_contract(kernel);
    return plan_case(c, parse_shape(c, shape), dtype, defines, launch);
}

/// test::GpuEngine that prepares a contract with its defines overridden.
struct Fixture : test::GpuEngine {
    PreparedArm prepare(const std::string& kernel, const Defines& overrides = {}) {
        const KernelContract& c = kernel_contract(kernel);
        Defines d = c.defines;
        for (const auto& [k, v] : overrides)
            d[k] = v;
        return prepare_arms(engine, c, {d}, device).front();
    }
};

/// The outputs of one launch of `plan` on `inputs` (bytes, plan.outputs order), every buffer
/// (or only the inputs named in `shifted`, where it names any) `off` bytes past its
/// allocation's 16-byte alignment, the inputs named in `null` passed as null pointers, the
/// outputs filled with 0xff first (NaN in fp32 and bf16: an element left unwritten differs).
std::vector<std::vector<unsigned char>> run_offset(const PreparedArm& arm, const CasePlan& plan,
                                                   const std::vector<HostBuffer>& inputs,
                                                   std::size_t off,
                                                   const std::vector<std::string>& null = {},
                                                   const std::vector<std::string>& shifted = {}) {
    const auto named = [](const std::vector<std::string>& names, const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    // A name that is no input (misspelt, or an output's) would leave the test testing nothing.
    for (const auto* names : {&null, &shifted})
        for (const std::string& n : *names)
            REQUIRE_MESSAGE(std::any_of(plan.inputs.begin(), plan.inputs.end(),
                                        [&](std::size_t i) { return plan.buffers[i].name == n; }),
                            n << " is not an input of the case");
    std::vector<DeviceBuffer> owned;
    std::vector<CUdeviceptr> ptrs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string& name = plan.buffers[plan.inputs[i]].name;
        if (named(null, name)) {
            ptrs.push_back(0);
            continue;
        }
        const std::size_t o = shifted.empty() || named(shifted, name) ? off : 0;
        std::vector<std::byte> padded(o + inputs[i].bytes.size() + 16);
        std::memcpy(padded.data() + o, inputs[i].bytes.data(), inputs[i].bytes.size());
        owned.push_back(DeviceBuffer::from<std::byte>(padded));
        ptrs.push_back(owned.back().ptr() + o);
    }
    const std::size_t first_out = owned.size(), out_off = shifted.empty() ? off : 0;
    for (std::size_t o : plan.outputs) {
        owned.emplace_back(plan.buffers[o].bytes() + 2 * 16);
        owned.back().fill_bytes(0xff);
        ptrs.push_back(owned.back().ptr() + out_off);
    }
    const Stream stream;
    enqueue_case(plan, arm.functions(plan), ptrs, stream.handle());
    stream.synchronize();
    std::vector<std::vector<unsigned char>> got;
    for (std::size_t k = 0; k < plan.outputs.size(); ++k) {
        const DeviceBuffer& b = owned[first_out + k];
        std::vector<unsigned char> bytes(b.bytes());
        b.download(bytes.data(), bytes.size());
        const auto from = bytes.begin() + static_cast<long>(out_off);
        got.emplace_back(from, from + static_cast<long>(plan.buffers[plan.outputs[k]].bytes()));
    }
    return got;
}

/// [B, R, S] elements of `es` bytes to [B, S, R].
std::vector<std::byte> transposed(std::span<const std::byte> in, std::size_t es, long long b,
                                  long long r, long long s) {
    std::vector<std::byte> out(in.size());
    for (long long i = 0; i < b; ++i)
        for (long long j = 0; j < r; ++j)
            for (long long k = 0; k < s; ++k)
                std::memcpy(out.data() + ((i * s + k) * r + j) * es,
                            in.data() + ((i * r + j) * s + k) * es, es);
    return out;
}

} // namespace

TEST_SUITE("kernels") {

TEST_CASE("the conv1d reference on a worked example") {
    // One row: state [1 2 3], x [4 5], w [1 10 100 1000], bias 0.5.
    const std::vector<double> x{4, 5}, w{1, 10, 100, 1000}, bias{0.5}, state{1, 2, 3};
    std::vector<double> y(2), out(3);
    conv1d_reference(x, w, bias, state, y, out, 1, 1, 2, false);
    CHECK(y[0] == 0.5 + 1 * 1 + 10 * 2 + 100 * 3 + 1000 * 4);
    CHECK(y[1] == 0.5 + 1 * 2 + 10 * 3 + 100 * 4 + 1000 * 5);
    CHECK(out == std::vector<double>{3, 4, 5});
    conv1d_reference(x, w, bias, state, y, out, 1, 1, 2, true);
    const double z = 0.5 + 2 + 30 + 400 + 5000;
    CHECK(y[1] == doctest::Approx(z / (1 + std::exp(-z))));
}

TEST_CASE("the delta-rule reference on a worked example") {
    // Zero state: u = beta v, S = k u^T, o = u (k . q) scale.
    const std::vector<double> q{1, 2}, k{3, 4}, v{5, 6, 7}, g{0.3}, beta{0.5};
    std::vector<double> s(6, 0.0), o(3);
    delta_rule_reference(q, k, v, g, beta, s, o, 1, 2, 3, 0.25);
    for (int j = 0; j < 3; ++j) {
        const double u = 0.5 * v[j];
        CHECK(s[0 * 3 + j] == doctest::Approx(3 * u));
        CHECK(s[1 * 3 + j] == doctest::Approx(4 * u));
        CHECK(o[j] == doctest::Approx(u * (3 * 1 + 4 * 2) * 0.25));
    }
}

TEST_CASE("the fixture contract linked into this binary is registered with no list edited") {
    // tests/CMakeLists.txt links tests/fixtures/contract into test_kernels; its static
    // registrar puts it after kjit's own contracts, and every test below takes it up.
    std::vector<std::string> names;
    for (const KernelContract* c : kernel_contracts())
        names.push_back(c->name);
    CHECK(names == std::vector<std::string>{"rms_norm", "conv1d", "conv1d_update", "conv1d_cl", "delta_rule",
                                                 "axpy"});
    const KernelContract& axpy = kernel_contract("axpy");
    CHECK(axpy.args.at(1).role == ArgRole::in_out);
    const CasePlan plan = plan_case(axpy, parse_shape(axpy, "n=5"), DType::f32);
    const auto in = generated_inputs(plan, 3);
    const auto out = reference_outputs(plan, in);
    const auto x = element_values(in[0]), y = element_values(in[1]);
    for (std::size_t i = 0; i < 5; ++i)
        CHECK(out[0][i] == 0.5 * x[i] + y[i]);
}

TEST_CASE("every registered contract plans its shapes and runs its reference on its inputs") {
    for (const KernelContract* c : kernel_contracts()) {
        INFO(c->name);
        CHECK_NOTHROW(validate_contract(*c));
        for (const CheckShape& s : c->check_shapes)
            for (DType d : s.dtypes.empty() ? c->dtypes : s.dtypes) {
                INFO(s.shape << " " << dtype_name(d));
                const CasePlan plan = plan_case(*c, parse_shape(*c, s.shape), d,
                                                merge_defines(c->defines, s.defines));
                CHECK(plan.main_launch().grid.volume() > 0);
                CHECK(plan.main_launch().block.volume() > 0);
                if (plan.buffers[plan.inputs.front()].count > (1u << 20))
                    continue; // production shapes: planning is the point here
                const auto want = reference_outputs(plan, generated_inputs(plan, 1));
                REQUIRE(want.size() == plan.outputs.size());
                for (std::size_t o = 0; o < want.size(); ++o) {
                    CHECK(want[o].size() == plan.buffers[plan.outputs[o]].count);
                    CHECK(relative_l2(want[o], want[o]) == 0.0); // finite, every element
                }
            }
    }
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("conv1d matches the float64 reference in fp32 and bf16 on both load paths") {
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    KJIT_TEST_RANDOM_SEED(seed);
    const PreparedArm arm = f.prepare("conv1d");
    for (DType d : {DType::f32, DType::bf16})
        for (const char* shape : {"b=2,c=64,t=1304", "b=3,c=5,t=37", "b=1,c=8,t=2"}) {
            INFO(dtype_name(d) << " " << shape);
            const CasePlan plan = plan_at("conv1d", shape, d);
            const std::vector<HostBuffer> inputs = generated_inputs(plan, seed);
            CaseBuffers buffers(plan, inputs);
            const auto got = run_case_once(arm, plan, buffers);
            const auto want = reference_outputs(plan, inputs);
            CHECK(relative_l2(element_values(got[0]), want[0]) <
                  (d == DType::bf16 ? 1e-2 : 1e-6));
            CHECK(element_values(got[1]) == want[1]); // the carry-out is copied, exactly
        }
}

TEST_CASE("conv1d is bit-identical across tiles and blocks and segments per warp") {
    // Launch geometry only: rows of many segments, a partial last one, aligned and unaligned;
    // rows of one whole segment (32 x 16 steps) or less, which a warp of several segments walks
    // across.
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    KJIT_TEST_RANDOM_SEED(seed);
    const std::vector<Defines> variants = {
        {{"CONV_TILE", "16"}, {"CONV_BLOCK", "64"}, {"CONV_SEGS", "1"}},
        {{"CONV_TILE", "8"}, {"CONV_BLOCK", "128"}, {"CONV_SEGS", "4"}},
        {{"CONV_TILE", "32"}, {"CONV_BLOCK", "64"}, {"CONV_SEGS", "2"}},
        {{"CONV_TILE", "4"}, {"CONV_BLOCK", "256"}, {"CONV_SEGS", "8"}},
        {{"CONV_TILE", "16"}, {"CONV_BLOCK", "32"}, {"CONV_SEGS", "3"}},
        {{"CONV_TILE", "16"}, {"CONV_BLOCK", "64"}, {"CONV_SEGS", "0"}}}; // 0: by element size
    for (DType d : {DType::f32, DType::bf16})
        for (const char* shape : {"b=2,c=3,t=5000", "b=2,c=3,t=4999", "b=1,c=2,t=2",
                                  "b=3,c=7,t=512", "b=2,c=9,t=64", "b=2,c=9,t=61"}) {
            std::vector<HostBuffer> first;
            for (const Defines& v : variants) {
                INFO(dtype_name(d) << " " << shape << " " << defines_text(v));
                const CasePlan plan = plan_at("conv1d", shape, d, v);
                const std::vector<HostBuffer> inputs = generated_inputs(plan, seed);
                CaseBuffers buffers(plan, inputs);
                const auto got = run_case_once(f.prepare("conv1d", v), plan, buffers);
                if (first.empty()) {
                    first = got;
                    const auto want = reference_outputs(plan, inputs);
                    CHECK(relative_l2(element_values(got[0]), want[0]) <
                          (d == DType::bf16 ? 1e-2 : 1e-6));
                } else {
                    for (std::size_t o = 0; o < got.size(); ++o)
                        CHECK(got[o].bytes == first[o].bytes);
                }
            }
        }
}

TEST_CASE("conv1d over the rows laid end to end (CONV_FLAT) keeps the row walk's bits") {
    // Rows of whole chunks shorter than a segment (64, 12 and 4 steps: several rows to a
    // lane's round), rows of several segments and a partial one (1304), and lengths no chunk
    // divides (61, 4999; bf16 12 and 4 at 8-step chunks), which the contract gives the row
    // walk's grid; tiles, blocks and segments per warp; with the carry-in state and bias and
    // without (null); x and y one element off 16-byte alignment, where the kernel walks the
    // rows, striding over the flat grid; the contract's grid, and grids of 1 and 3 blocks, where
    // each warp strides over many segments. Every output byte equals the row walk's
    // (CONV_FLAT 0) under the same inputs.
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    KJIT_TEST_RANDOM_SEED(seed);
    const std::vector<Defines> flat = {
        {{"CONV_TILE", "16"}, {"CONV_BLOCK", "64"}, {"CONV_SEGS", "1"}, {"CONV_FLAT", "1"}},
        {{"CONV_TILE", "4"}, {"CONV_BLOCK", "256"}, {"CONV_SEGS", "8"}, {"CONV_FLAT", "1"}},
        {{"CONV_TILE", "8"}, {"CONV_BLOCK", "128"}, {"CONV_SEGS", "4"}, {"CONV_FLAT", "1"}},
        {{"CONV_TILE", "32"}, {"CONV_BLOCK", "64"}, {"CONV_SEGS", "2"}, {"CONV_FLAT", "1"}},
        {{"CONV_TILE", "16"}, {"CONV_BLOCK", "32"}, {"CONV_SEGS", "3"}, {"CONV_FLAT", "1"}},
        {{"CONV_TILE", "4"}, {"CONV_BLOCK", "64"}, {"CONV_SEGS", "0"}, {"CONV_FLAT", "1"}}};
    const Defines walk{{"CONV_TILE", "16"}, {"CONV_BLOCK", "64"}, {"CONV_SEGS", "1"}};
    for (const char* shape : {"b=2,c=9,t=64", "b=3,c=37,t=12", "b=5,c=7,t=4", "b=2,c=3,t=1304",
                              "b=2,c=9,t=61", "b=2,c=3,t=4999"})
        for (DType d : {DType::f32, DType::bf16}) {
            const std::size_t es = dtype_size(d);
            // y and state_out from a launch with every buffer one element off alignment or
            // not, bias and state_in null without `carry`.
            const auto run = [&](const Defines& defines, bool misaligned, bool carry,
                                 unsigned blocks = 0) {
                CasePlan plan = plan_at("conv1d", shape, d, defines);
                if (blocks)
                    plan.steps.at(0).grid.x = std::min(blocks, plan.steps.at(0).grid.x);
                return run_offset(f.prepare("conv1d", defines), plan,
                                  generated_inputs(plan, seed), misaligned ? es : 0,
                                  carry ? std::vector<std::string>{}
                                        : std::vector<std::string>{"bias", "state_in"});
            };
            for (bool misaligned : {false, true})
                for (bool carry : {true, false}) {
                    const auto base = run(walk, misaligned, carry);
                    for (const Defines& v : flat)
                        for (unsigned blocks : {0u, 1u, 3u}) {
                            INFO(dtype_name(d) << " " << shape << " " << defines_text(v)
                                               << (misaligned ? " misaligned" : "")
                                               << (carry ? "" : " no carry-in, no bias")
                                               << (blocks ? " grid of at most " : "")
                                               << (blocks ? std::to_string(blocks) : ""));
                            CHECK(run(v, misaligned, carry, blocks) == base);
                        }
                }
        }
}

TEST_CASE("conv1d_cl is conv1d on the transposed tensors bit for bit") {
    // Channel-last (x, y [B, T, C], the states [B, 3, C]) against the row kernel, whose bits the
    // tests above settle: channel counts of whole 4-channel vectors and not (5, 67), lengths of
    // whole tiles and not, rows shorter than the three steps before (t = 2), at several steps
    // per thread and blocks; 8 channels a thread (c = 12: the element path; 64: 8-channel
    // vectors); several tiles a thread, the next one loaded ahead where it is whole (c = 64,
    // t = 41 at 4 x 4 steps: a last span of two whole tiles, the second loaded ahead, then one
    // step); with the carry-in state and bias and without (null); x and y one element off
    // alignment (the element path); the first tile's loads one use at a time (CONV_CL_EAGER=0,
    // the first eight variants) and all at once (the last three), with the weights and bias one
    // element off alignment too (their scalar loads beside vector x, y).
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    KJIT_TEST_RANDOM_SEED(seed);
    const std::vector<Defines> variants = {
        {{"CONV_CL_STEPS", "8"}, {"CONV_CL_EAGER", "0"}, {"CONV_BLOCK", "64"}},
        {{"CONV_CL_STEPS", "4"}, {"CONV_CL_EAGER", "0"}, {"CONV_BLOCK", "256"}},
        {{"CONV_CL_STEPS", "16"}, {"CONV_CL_EAGER", "0"}, {"CONV_BLOCK", "128"}},
        {{"CONV_CL_STEPS", "32"}, {"CONV_CL_EAGER", "0"}, {"CONV_BLOCK", "32"}},
        {{"CONV_CL_STEPS", "8"},
         {"CONV_CL_SEGS", "2"},
         {"CONV_CL_EAGER", "0"},
         {"CONV_BLOCK", "64"}},
        {{"CONV_CL_STEPS", "4"},
         {"CONV_CL_SEGS", "4"},
         {"CONV_CL_CH", "8"},
         {"CONV_CL_EAGER", "0"},
         {"CONV_BLOCK", "128"}},
        {{"CONV_CL_STEPS", "8"},
         {"CONV_CL_SEGS", "2"},
         {"CONV_CL_CH", "8"},
         {"CONV_CL_EAGER", "0"},
         {"CONV_BLOCK", "32"}},
        {{"CONV_CL_STEPS", "16"},
         {"CONV_CL_CH", "8"},
         {"CONV_CL_EAGER", "0"},
         {"CONV_BLOCK", "256"}},
        {{"CONV_CL_STEPS", "2"}, {"CONV_CL_EAGER", "1"}, {"CONV_BLOCK", "64"}},
        {{"CONV_CL_STEPS", "16"},
         {"CONV_CL_SEGS", "2"},
         {"CONV_CL_EAGER", "1"},
         {"CONV_BLOCK", "32"}},
        {{"CONV_CL_STEPS", "4"},
         {"CONV_CL_SEGS", "2"},
         {"CONV_CL_CH", "8"},
         {"CONV_CL_EAGER", "1"},
         {"CONV_BLOCK", "128"}}};
    for (const char* shape :
         {"b=2,c=64,t=1304", "b=3,c=5,t=37", "b=2,c=64,t=41", "b=2,c=67,t=64", "b=2,c=12,t=2",
          "b=1,c=256,t=8"})
        for (DType d : {DType::f32, DType::bf16}) {
            const std::size_t es = dtype_size(d);
            const CasePlan rows = plan_at("conv1d", shape, d);
            const std::vector<HostBuffer> in = generated_inputs(rows, seed);
            const long long b = rows.shape.at("b"), c = rows.shape.at("c"), t = rows.shape.at("t");
            // The same values channel-last: x [B, C, T] -> [B, T, C], state_in [B, C, 3] ->
            // [B, 3, C]; w and bias as they are.
            std::vector<HostBuffer> cl_in = in;
            for (HostBuffer& h : cl_in)
                if (h.name == "x")
                    h.bytes = transposed(h.bytes, es, b, c, t);
                else if (h.name == "state_in")
                    h.bytes = transposed(h.bytes, es, b, c, 3);
            for (bool carry : {true, false}) {
                const std::vector<std::string> null =
                    carry ? std::vector<std::string>{} : std::vector<std::string>{"bias", "state_in"};
                const auto want = run_offset(f.prepare("conv1d"), rows, in, 0, null);
                for (const Defines& v : variants)
                    for (const char* misaligned : {"", "all", "w, bias"}) {
                        INFO(dtype_name(d) << " " << shape << " " << defines_text(v)
                                           << " misaligned: " << misaligned
                                           << (carry ? "" : " no carry-in, no bias"));
                        const CasePlan cl = plan_at("conv1d_cl", shape, d, v);
                        const std::string m = misaligned;
                        const auto got = run_offset(
                            f.prepare("conv1d_cl", v), cl, cl_in, m.empty() ? 0 : es, null,
                            m == "all" ? std::vector<std::string>{}
                                       : std::vector<std::string>{"w", "bias"});
                        REQUIRE(got.size() == 2);
                        const auto bytes = [](const std::vector<unsigned char>& u) {
                            return std::span(reinterpret_cast<const std::byte*>(u.data()),
                                             u.size());
                        };
                        const auto same = [&](std::span<const std::byte> a,
                                              std::span<const std::byte> w) {
                            return std::equal(a.begin(), a.end(), w.begin(), w.end());
                        };
                        // y [B, T, C] and state_out [B, 3, C] back to the row kernel's layouts
                        CHECK(same(transposed(bytes(got[0]), es, b, t, c), bytes(want[0])));
                        CHECK(same(transposed(bytes(got[1]), es, b, 3, c), bytes(want[1])));
                    }
            }
        }
}

TEST_CASE("conv1d over T + 1 steps is conv1d over T steps and one conv1d_update bit for bit") {
    // The decode step continues a prefill: its output is the sequence kernel's last column and
    // its rolled state the sequence kernel's carry-out, in every dtype, tile and activation.
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    KJIT_TEST_RANDOM_SEED(seed);
    const int b = 2, c = 67;
    for (DType d : {DType::f32, DType::bf16})
        for (const char* silu : {"1", "0"})
            for (int t : {0, 2, 37, 1300}) {
                INFO(dtype_name(d) << " CONV_SILU=" << silu << " t=" << t);
                const std::size_t es = dtype_size(d);
                const Defines seq{{"CONV_SILU", silu}, {"CONV_TILE", t == 37 ? "4" : "16"}};
                const auto shape = [&](int steps) {
                    return "b=" + std::to_string(b) + ",c=" + std::to_string(c) +
                           ",t=" + std::to_string(steps);
                };
                // The whole sequence.
                const CasePlan all = plan_at("conv1d", shape(t + 1), d, seq);
                const std::vector<HostBuffer> in_all = generated_inputs(all, seed);
                CaseBuffers buf_all(all, in_all);
                const auto got_all = run_case_once(f.prepare("conv1d", seq), all, buf_all);
                // Its first T steps (none: the carry-in passes through), then the last token.
                std::vector<HostBuffer> in_head = in_all, in_step;
                HostBuffer last = in_all[0];
                last.count = static_cast<std::size_t>(b) * c;
                last.bytes.resize(last.count * es);
                in_head[0].count = last.count * t;
                in_head[0].bytes.resize(in_head[0].count * es);
                for (std::size_t r = 0; r < last.count; ++r) {
                    const std::byte* row = in_all[0].bytes.data() + r * (t + 1) * es;
                    std::memcpy(in_head[0].bytes.data() + r * t * es, row, t * es);
                    std::memcpy(last.bytes.data() + r * es, row + t * es, es);
                }
                std::vector<HostBuffer> got_head;
                if (t > 0) {
                    const CasePlan head = plan_at("conv1d", shape(t), d, seq);
                    CaseBuffers buf_head(head, in_head);
                    got_head = run_case_once(f.prepare("conv1d", seq), head, buf_head);
                } else {
                    got_head = {HostBuffer{}, in_all[3]};
                }
                const Defines upd{{"CONV_SILU", silu}};
                const CasePlan step = plan_at("conv1d_update", "b=2,c=67", d, upd);
                const std::vector<HostBuffer> in_upd = {last, in_all[1], in_all[2], got_head[1]};
                CaseBuffers buf_step(step, in_upd);
                const auto got_step =
                    run_case_once(f.prepare("conv1d_update", upd), step, buf_step);
                CHECK(got_step[0].bytes == got_all[1].bytes); // the state: the carry-out
                std::vector<std::byte> last_column(last.bytes.size());
                for (std::size_t r = 0; r < last.count; ++r)
                    std::memcpy(last_column.data() + r * es,
                                got_all[0].bytes.data() + (r * (t + 1) + t) * es, es);
                CHECK(got_step[1].bytes == last_column);
                if (t == 37) {
                    // And both against the float64 reference.
                    const auto want = reference_outputs(step, in_upd);
                    CHECK(relative_l2(element_values(got_step[1]), want[1]) <
                          (d == DType::bf16 ? 1e-2 : 1e-6));
                    CHECK(element_values(got_step[0]) == want[0]);
                }
            }
}

TEST_CASE("delta-rule decode matches the reference and is bit-identical across BV and access widths and compiled widths") {
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    KJIT_TEST_RANDOM_SEED(seed);
    // dv = 100 leaves the last value tile part full; dv = 98 is no multiple of 4, so DR_VEC=4
    // takes the column-by-column path (DR_VEC=2 still moves pairs). DR_DK / DR_DV run the
    // compiled-in path at the widths they name and the run-time path at any other. The bits
    // depend on DR_KSPLIT only: each group of define sets shares one DR_KSPLIT (the table's
    // picks use 2, 4, 8 and 16) and must agree bit for bit.
    for (const char* shape : {"b=1,h=32,dk=128,dv=128", "b=2,h=3,dk=64,dv=100", "b=2,h=3,dk=64,dv=98"}) {
        INFO(shape);
        const CasePlan at = plan_at("delta_rule", shape, DType::f32);
        const std::string dk = std::to_string(static_cast<long long>(at.shape.at("dk")));
        const std::string dv = std::to_string(static_cast<long long>(at.shape.at("dv")));
        const std::vector<std::vector<Defines>> groups{
            {{{"DR_BV", "16"}},
             {{"DR_BV", "32"}},
             {{"DR_BV", "64"}},
             {{"DR_BV", "32"}, {"DR_VEC", "2"}},
             {{"DR_BV", "32"}, {"DR_VEC", "4"}},
             {{"DR_BV", "8"}, {"DR_VEC", "4"}},
             {{"DR_BV", "64"}, {"DR_VEC", "4"}, {"DR_DK", dk}, {"DR_DV", dv}},
             {{"DR_BV", "32"}, {"DR_VEC", "2"}, {"DR_DK", dk}, {"DR_DV", dv}},
             {{"DR_BV", "32"}, {"DR_DK", dk}, {"DR_DV", dv}},
             {{"DR_BV", "32"}, {"DR_VEC", "4"}, {"DR_DK", "128"}, {"DR_DV", "100"}}},
            {{{"DR_KSPLIT", "2"}, {"DR_BV", "32"}},
             {{"DR_KSPLIT", "2"}, {"DR_BV", "64"}, {"DR_VEC", "2"}, {"DR_DK", dk}, {"DR_DV", dv}}},
            {{{"DR_KSPLIT", "8"}, {"DR_BV", "32"}},
             {{"DR_KSPLIT", "8"}, {"DR_BV", "32"}, {"DR_VEC", "2"}, {"DR_DK", dk}, {"DR_DV", dv}},
             {{"DR_KSPLIT", "8"}, {"DR_BV", "64"}, {"DR_VEC", "4"}}},
            {{{"DR_KSPLIT", "16"}, {"DR_BV", "16"}},
             {{"DR_KSPLIT", "16"}, {"DR_BV", "32"}, {"DR_VEC", "4"}, {"DR_DK", dk}, {"DR_DV", dv}}}};
        for (const std::vector<Defines>& group : groups) {
            std::vector<HostBuffer> first;
            std::string first_name;
            for (const Defines& defines : group) {
                const std::string name = defines_text(defines);
                CAPTURE(name);
                const CasePlan plan = plan_at("delta_rule", shape, DType::f32, defines);
                const std::vector<HostBuffer> inputs = generated_inputs(plan, seed);
                CaseBuffers buffers(plan, inputs);
                const auto got = run_case_once(f.prepare("delta_rule", defines), plan, buffers);
                const auto want = reference_outputs(plan, inputs);
                for (std::size_t o = 0; o < got.size(); ++o) // the state, then o
                    CHECK_MESSAGE(relative_l2(element_values(got[o]), want[o]) <
                                      output_tolerance(plan.buffers[plan.outputs[o]]),
                                  got[o].name);
                if (first.empty()) {
                    first = got;
                    first_name = name;
                } else {
                    for (std::size_t o = 0; o < got.size(); ++o)
                        CHECK_MESSAGE(got[o].bytes == first[o].bytes,
                                      name << " differs from " << first_name << " in " << got[o].name);
                }
            }
        }
    }
}

/// Launches delta_rule_decode at dk = 132 directly, without the contract (which refuses dk = 132
/// at DR_MAX_DK = 128 before any launch: test_cases), and checks that the kernel stops rather than
/// stage 132 keys in 128 slots. A trap spoils the context, so each define set is its own case.
static void check_delta_rule_traps_at_dk_132(const Defines& defines) {
    Fixture f;
    const PreparedArm arm = f.prepare("delta_rule", defines);
    const Function& fn = arm.function("delta_rule_decode");
    const int dk = 132, dv = 32;
    DeviceBuffer q(dk * 4), k(dk * 4), v(dv * 4), g(4), beta(4), state(dk * dv * 4), o(dv * 4);
    const Stream stream;
    fn.launch({{1, 1, 1}, {32, 4, 1}, 0, stream.handle()}, q.ptr(), k.ptr(), v.ptr(), g.ptr(),
              beta.ptr(), state.ptr(), o.ptr(), dk, dv, 0.125f);
    try {
        stream.synchronize();
        FAIL("the launch at dk = 132 ran to completion");
    } catch (const CudaError& e) {
        INFO(e.what());
        CHECK(e.code == CUDA_ERROR_LAUNCH_FAILED); // what the driver reports for __trap()
    }
}

TEST_CASE("a delta_rule launch made without the contract at a key width the kernel cannot hold stops with an error") {
    KJIT_REQUIRE_DEVICE();
    check_delta_rule_traps_at_dk_132({{"DR_MAX_DK", "128"}, {"DR_KSPLIT", "4"}});
}

TEST_CASE("a delta_rule launch at a key width other than the compiled-in one that the kernel cannot hold stops with an error") {
    KJIT_REQUIRE_DEVICE();
    // dk = 132 differs from the compiled-in DR_DK = 64, so the kernel takes its run-time-width
    // path, where the guard must hold as it does without DR_DK.
    check_delta_rule_traps_at_dk_132(
        {{"DR_MAX_DK", "128"}, {"DR_KSPLIT", "4"}, {"DR_DK", "64"}, {"DR_DV", "32"}});
}

TEST_CASE("rms_norm is bit-identical across block widths and row groups and load paths and compiled widths and not across reduction widths") {
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    KJIT_TEST_RANDOM_SEED(seed);
    // Rows of 1792 chunks (fp32; bf16 896), 4096 (2048: two rounds of a warp's 1024 partials in
    // either dtype), 250 (125) and 2 chunks (a warp row's register cache holds 32 x RMS_CACHE),
    // and n = 1001, whose last chunk is partial (the element-by-element path in every form);
    // 333 rows leave a block of warp rows part empty and a last group of two rows half full,
    // 334 rows a last group of three with one row; rows of 4096 are 1024 fp32 chunks, 32 per
    // lane of a warp. With the width compiled in, rows of 200 and 640 fill 2 and 5 fp32 virtual
    // warps (1 and 3 bf16), summed over 2 and 8 lanes (1 and 4).
    for (const char* shape : {"rows=64,n=7168", "rows=16,n=16384", "rows=333,n=1000",
                              "rows=333,n=1001", "rows=333,n=8", "rows=334,n=8", "rows=64,n=4096",
                              "rows=37,n=200", "rows=37,n=640"})
    for (DType d : {DType::f32, DType::bf16}) {
        CAPTURE(shape);
        const std::size_t es = dtype_size(d);
        const auto run = [&](const Defines& defines, bool misaligned,
                             const LaunchValues& launch = {}, bool special = false) {
            const CasePlan plan = plan_at("rms_norm", shape, d, defines, launch);
            const PreparedArm arm = f.prepare("rms_norm", defines);
            std::vector<HostBuffer> inputs = generated_inputs(plan, seed);
            if (special) // x: a NaN with a payload in row 5, a negative NaN in row 6, inf in row 7
                for (const auto& [row, f32, b16] :
                     {std::tuple{5, 0x7fc00123u, 0x7fc1u}, std::tuple{6, 0xffc00000u, 0xffc0u},
                      std::tuple{7, 0x7f800000u, 0x7f80u}}) {
                    std::byte* at = inputs[0].bytes.data() +
                                    (static_cast<std::size_t>(row) * plan.shape.at("n")) * es;
                    if (d == DType::f32)
                        std::memcpy(at, &f32, 4);
                    else
                        std::memcpy(at, &b16, 2);
                }
            // One element of padding in front: the same values, no longer 16-byte aligned, so
            // the element-by-element path runs.
            return run_offset(arm, plan, inputs, misaligned ? es : 0).front();
        };
        const auto base = run({{"RMS_BLOCK", "256"}}, false);
        CHECK(run({{"RMS_BLOCK", "64"}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "1024"}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "256"}}, true) == base);
        // The block form's cached row with the weight loaded before the reduction.
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_W_EARLY", "1"}}, false) == base);
        // A warp per row: RMS_CACHE 8, 32 and 1 (rows of more than 256, 1024 and 32 chunks read
        // twice), aligned or not, RMS_W_EARLY (a block form's knob, which warp rows ignore), and
        // 7 blocks striding over the rows.
        const Defines warp_rows{{"RMS_BLOCK", "128"}, {"RMS_WARP_ROWS", "1"}};
        CHECK(run(warp_rows, false) == base);
        CHECK(run(warp_rows, true) == base);
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_WARP_ROWS", "1"}, {"RMS_CACHE", "32"}}, false) ==
              base);
        CHECK(run({{"RMS_BLOCK", "64"}, {"RMS_WARP_ROWS", "1"}, {"RMS_CACHE", "1"}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "128"}, {"RMS_WARP_ROWS", "1"}, {"RMS_CACHE", "4"},
                   {"RMS_W_EARLY", "1"}},
                  false) == base);
        CHECK(run(warp_rows, false, {{"ROWS_PER_LAUNCH", 7}}) == base);
        // Rows in groups of 2 and 3 per warp; rows that do not fit the group's registers, or are
        // misaligned, go one per warp.
        CHECK(run({{"RMS_BLOCK", "64"}, {"RMS_WARP_ROWS", "2"}, {"RMS_CACHE", "8"}}, false) ==
              base);
        CHECK(run({{"RMS_BLOCK", "128"}, {"RMS_WARP_ROWS", "3"}, {"RMS_CACHE", "4"}}, false) ==
              base);
        CHECK(run({{"RMS_BLOCK", "64"}, {"RMS_WARP_ROWS", "2"}, {"RMS_CACHE", "1"}}, false) ==
              base);
        CHECK(run({{"RMS_BLOCK", "64"}, {"RMS_WARP_ROWS", "2"}}, true) == base);
        CHECK(run({{"RMS_BLOCK", "64"}, {"RMS_WARP_ROWS", "2"}}, false, {{"ROWS_PER_LAUNCH", 7}}) ==
              base);
        CHECK(run({{"RMS_BLOCK", "256"}}, false, {{"ROWS_PER_LAUNCH", 7}}) == base);
        // The width compiled in (RMS_N), aligned or not, in both forms; a build for another
        // width launched at this one takes the run-time path.
        const std::string width = std::to_string(plan_at("rms_norm", shape, d).shape.at("n"));
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_N", width}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_N", width}}, true) == base);
        CHECK(run({{"RMS_BLOCK", "64"}, {"RMS_WARP_ROWS", "2"}, {"RMS_N", width}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_N", "24"}}, false) == base);
        // A compiled-in width of at most 8 x 32 chunks sums only the virtual warps with data and
        // skips the block's first barrier: 7 blocks striding over the rows still meet it.
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_N", width}}, false, {{"ROWS_PER_LAUNCH", 7}}) ==
              base);
        // A row as straight-line code (RMS_ONE_ROW, with the width compiled in) where the row is
        // whole chunks per thread: fp32 and bf16 rows of 4096 and 7168 at 128 threads (8 and 4,
        // 14 and 7 chunks per thread; 8 partials each), bf16 16384 (16), fp32 rows of 640 at
        // 32 threads (5 chunks, 32 partials, summed over 8 lanes), 256 threads with the weight
        // loaded early (4 and 2 at 4096); elsewhere, misaligned, or with 7 blocks for the rows
        // the general path runs.
        const Defines one_row{{"RMS_BLOCK", "128"}, {"RMS_CACHE", "16"}, {"RMS_N", width},
                              {"RMS_ONE_ROW", "1"}};
        CHECK(run(one_row, false) == base);
        CHECK(run(one_row, true) == base);
        CHECK(run(one_row, false, {{"ROWS_PER_LAUNCH", 7}}) == base);
        CHECK(run({{"RMS_BLOCK", "32"}, {"RMS_CACHE", "8"}, {"RMS_N", width}, {"RMS_ONE_ROW", "1"}},
                  false) == base);
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_CACHE", "4"}, {"RMS_N", width}, {"RMS_ONE_ROW", "1"},
                   {"RMS_W_EARLY", "1"}},
                  false) == base);
        // No row kept in registers (RMS_CACHE 0): each read twice, chunk by chunk or in groups
        // of 2 - 8 chunks per thread (RMS_UNROLL; 3 rounds up to 4, a multiple of the partials
        // per thread at 256 and 512 threads), with L2 hints; misaligned rows go element by
        // element; at 1024 threads, rows of more than 2 chunks per thread.
        const Defines uncached{{"RMS_BLOCK", "256"}, {"RMS_CACHE", "0"}, {"RMS_UNROLL", "8"},
                               {"RMS_HINT", "1"}};
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_CACHE", "0"}}, false) == base);
        CHECK(run(uncached, false) == base);
        CHECK(run(uncached, true) == base);
        CHECK(run(uncached, false, {{"ROWS_PER_LAUNCH", 7}}) == base);
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_CACHE", "0"}, {"RMS_UNROLL", "3"}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "512"}, {"RMS_CACHE", "0"}, {"RMS_UNROLL", "3"}, {"RMS_HINT", "1"}},
                  false) == base);
        CHECK(run({{"RMS_BLOCK", "1024"}, {"RMS_CACHE", "2"}, {"RMS_UNROLL", "2"}}, false) == base);
        // 64 threads (4 partials each), and the width compiled in, aligned or not.
        CHECK(run({{"RMS_BLOCK", "64"}, {"RMS_CACHE", "0"}, {"RMS_UNROLL", "4"}}, false) == base);
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_CACHE", "0"}, {"RMS_UNROLL", "4"}, {"RMS_HINT", "1"},
                   {"RMS_N", width}},
                  false) == base);
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_CACHE", "0"}, {"RMS_N", width}}, true) == base);
        // A reduction exactly as wide as a row of 896 chunks (bf16 rows of 7168), which blocks of
        // 7 and 14 warps split evenly: a row of at most 896 chunks keeps chunk c in partial c,
        // as at 1024, so the bits stay; kept in registers, or read twice in groups with the L2
        // hints, aligned or not.
        if ((std::stoi(width) * es + 15) / 16 <= 896) {
            CHECK(run({{"RMS_WIDTH", "896"}, {"RMS_BLOCK", "224"}, {"RMS_CACHE", "4"}}, false) ==
                  base);
            const Defines uncached896{{"RMS_WIDTH", "896"}, {"RMS_BLOCK", "448"},
                                      {"RMS_CACHE", "0"}, {"RMS_UNROLL", "2"}, {"RMS_HINT", "1"}};
            CHECK(run(uncached896, false) == base);
            CHECK(run(uncached896, true) == base);
            CHECK(run({{"RMS_WIDTH", "896"}, {"RMS_BLOCK", "224"}, {"RMS_CACHE", "0"},
                       {"RMS_UNROLL", "4"}, {"RMS_HINT", "1"}},
                      false) == base);
        }
        // NaN and inf in x: the paired bf16 conversion of the 16-byte stores keeps the bits of
        // from_float, which the misaligned path's element stores use.
        const auto special = run({{"RMS_BLOCK", "256"}}, false, {}, true);
        CHECK(special != base);
        CHECK(run({{"RMS_BLOCK", "256"}}, true, {}, true) == special);
        CHECK(run(warp_rows, false, {}, true) == special);
        CHECK(run({{"RMS_BLOCK", "64"}, {"RMS_WARP_ROWS", "2"}, {"RMS_CACHE", "8"}}, false, {},
                  true) == special);
        CHECK(run({{"RMS_BLOCK", "256"}, {"RMS_N", width}}, false, {}, true) == special);
        CHECK(run(one_row, false, {}, true) == special);
        CHECK(run(uncached, false, {}, true) == special);
        // A narrower reduction regroups the sum, the same way in both forms. In fp32 that moves
        // bits; bf16 inputs square to 16 significant bits, and their sums are often exact in any
        // grouping (and rows of 250 chunks and fewer sum the same partials either way).
        const auto narrow = run({{"RMS_BLOCK", "128"}, {"RMS_WIDTH", "512"}}, false);
        CHECK(run({{"RMS_BLOCK", "128"}, {"RMS_WIDTH", "512"}, {"RMS_WARP_ROWS", "1"}}, false) ==
              narrow);
        // 32 cached chunks per lane and 16 partials: a lane's chunks k and k + 16 share a
        // partial (fp32 rows of 4096: 32 chunks per lane; bf16 rows of 7168: 28).
        CHECK(run({{"RMS_BLOCK", "128"}, {"RMS_WIDTH", "512"}, {"RMS_WARP_ROWS", "2"},
                   {"RMS_CACHE", "32"}},
                  false) == narrow);
        CHECK(run({{"RMS_BLOCK", "128"}, {"RMS_WIDTH", "512"}, {"RMS_N", width}}, false) ==
              narrow);
        CHECK(run({{"RMS_BLOCK", "128"}, {"RMS_WIDTH", "512"}, {"RMS_CACHE", "0"},
                   {"RMS_UNROLL", "2"}},
                  false) == narrow);
        // Up to 14 chunks per thread over 4 partials: a partial sums chunks k, k + 4, ...
        CHECK(run({{"RMS_BLOCK", "128"}, {"RMS_WIDTH", "512"}, {"RMS_CACHE", "16"},
                   {"RMS_N", width}, {"RMS_ONE_ROW", "1"}},
                  false) == narrow);
        // Three virtual warps (RMS_WIDTH 96): a compiled-in width sums them over four lanes.
        // No row kept, summed in groups of 2 rounded up to 3 (3 partials per thread).
        const auto width96 = run({{"RMS_BLOCK", "32"}, {"RMS_WIDTH", "96"}}, false);
        CHECK(run({{"RMS_BLOCK", "32"}, {"RMS_WIDTH", "96"}, {"RMS_N", width}}, false) == width96);
        CHECK(run({{"RMS_BLOCK", "32"}, {"RMS_WIDTH", "96"}, {"RMS_CACHE", "0"}, {"RMS_UNROLL", "2"}},
                  false) == width96);
        if (d == DType::f32 && std::string_view(shape) == "rows=64,n=7168")
            CHECK(narrow != base);
    }
}

TEST_CASE("every registered contract's check cases pass on fresh random inputs") {
    KJIT_REQUIRE_DEVICE();
    Fixture f;
    KJIT_TEST_RANDOM_SEED(seed);
    for (const KernelContract* c : kernel_contracts())
        for (const CheckShape& s : c->check_shapes)
            for (DType d : s.dtypes.empty() ? c->dtypes : s.dtypes) {
                const Defines defines = merge_defines(c->defines, s.defines);
                const CasePlan plan = plan_case(*c, parse_shape(*c, s.shape), d, defines);
                const std::vector<HostBuffer> inputs = generated_inputs(plan, seed);
                CaseBuffers buffers(plan, inputs);
                const PreparedArm arm = prepare_arms(f.engine, *c, {defines}, f.device).front();
                const auto got = run_case_once(arm, plan, buffers);
                const auto want = reference_outputs(plan, inputs);
                for (std::size_t o = 0; o < got.size(); ++o) {
                    INFO(c->name << " " << s.shape << " " << dtype_name(d) << " " << got[o].name);
                    CHECK(find_unwritten(got[o]).count == 0);
                    CHECK(relative_l2(element_values(got[o]), want[o]) <=
                          output_tolerance(plan.buffers[plan.outputs[o]]));
                }
            }
}

} // TEST_SUITE
