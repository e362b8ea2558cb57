#include "kernels/registry.hpp"
#include "tests/support.hpp"
#include "tuning/abba.hpp"
#include "tuning/bench.hpp"
#include "tuning/case_arms.hpp"
#include "tuning/roofline.hpp"

#include "tests/doctest.hpp"

#include <cmath>

using namespace kjit;

namespace {
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit;
} // namespace

TEST_SUITE("bench") {

TEST_CASE("stats of known samples give min median mean max and the sample standard deviation") {
    const std::vector<double> odd{4, 1, 3, 2, 5};
    const Stats s = Stats::of(odd);
    CHECK(s.samples == odd); // in the order taken, not sorted
    CHECK(s.min == 1);
    CHECK(s.max == 5);
    CHECK(s.median == 3);
    CHECK(s.mean == 3);
    CHECK(s.stddev == doctest::Approx(std::sqrt(2.5))); // n - 1 in the denominator
    CHECK(s.relative_spread() == doctest::Approx(std::sqrt(2.5) / 3));
    CHECK(contains(s.summary(),
                   "min 1.0000 median 3.0000 mean 3.0000 max 5.0000 stddev 1.5811 ms"));
    CHECK(s.samples_text(1) == "4.0 1.0 3.0 2.0 5.0");
    CHECK(s.samples_text() == "4.0000 1.0000 3.0000 2.0000 5.0000");
    // Per-call times of a decode-size kernel (ms): four significant digits, not 0.0015.
    const Stats small = Stats::of(std::vector<double>{0.001519, 0.0015204, 0.00152});
    CHECK(small.samples_text() == "0.001519 0.001520 0.001520");
    CHECK(contains(small.summary(), "min 0.001519 median 0.001520"));

    const Stats even = Stats::of(std::vector<double>{10, 1, 3, 2});
    CHECK(even.median == 2.5); // the mean of the two middle samples
    CHECK(even.mean == 4);
    const Stats one = Stats::of(std::vector<double>{0.25});
    CHECK(one.stddev == 0);
    CHECK(one.median == 0.25);
    CHECK_THROWS_AS(Stats::of(std::vector<double>{}), Error);
}

TEST_CASE("shapes parse against the kernel's keys and mistakes are named") {
    const KernelContract& kc = kernel_contract("rms_norm");
    const ShapeValues s = parse_shape(kc, "n=7168, rows=8");
    CHECK(s.at("rows") == 8);
    CHECK(s.at("n") == 7168);
    CHECK(shape_text(kc, s) == "rows=8,n=7168");
    CHECK_THROWS_WITH_AS(parse_shape(kc, "rows=8,m=4"),
                         "error: bad shape 'rows=8,m=4': rms_norm has no shape key 'm' "
                         "(expected rows=N,n=N)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_shape(kc, "rows=8"),
                         "error: bad shape 'rows=8': n is missing (expected rows=N,n=N)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_shape(kc, "rows=8,n=x"),
                         "error: bad shape 'rows=8,n=x': n must be a positive 32-bit integer, "
                         "not 'x'",
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_shape(kc, "rows=8,rows=9,n=1"),
                         "error: bad shape 'rows=8,rows=9,n=1': rows is given twice",
                         ConfigError);
    CHECK_THROWS_AS(parse_shape(kc, "rows=0,n=1"), ConfigError);
    CHECK(split_shapes("rows=1,n=7;;rows=2,n=7;") ==
          std::vector<std::string>{"rows=1,n=7", "rows=2,n=7"});
    CHECK_THROWS_WITH_AS(kernel_contract("rms_nrom"),
                         "no bench or digest case for kernel 'rms_nrom' (known: rms_norm, "
                         "conv1d, conv1d_update, conv1d_cl, delta_rule)",
                         NotFoundError);
    const Defines d =
        merge_defines(kc.defines, std::vector<std::string>{"RMS_BLOCK=1024", "X"});
    CHECK(defines_text(d) == "RMS_BLOCK=1024 RMS_WARP_ROWS=0 X=1");
    CHECK_THROWS_AS(merge_defines(kc.defines, std::vector<std::string>{"9=1"}), ConfigError);
}

TEST_CASE("the rms_norm contract reads x and w and writes y and counts its bytes") {
    const KernelContract& kc = kernel_contract("rms_norm");
    CHECK(kc.defines.at("RMS_BLOCK") == "256");
    const ShapeValues shape = parse_shape(kc, "rows=8192,n=7168");
    const CasePlan f = plan_case(kc, shape, DType::f32);
    CHECK(f.entry() == "rms_norm_f32");
    REQUIRE(f.inputs.size() == 2);
    CHECK(f.buffers[f.inputs[1]].name == "w");
    CHECK(f.buffers[f.inputs[1]].count == 7168);
    REQUIRE(f.outputs.size() == 1);
    CHECK(f.buffers[f.outputs[0]].name == "y");
    CHECK(f.bytes == (2.0 * 8192 * 7168 + 7168) * 4);
    const CasePlan h = plan_case(kc, shape, DType::bf16);
    CHECK(h.entry() == "rms_norm_bf16");
    CHECK(h.bytes == f.bytes / 2);
    for (const auto& s : kc.digest_shapes)
        CHECK_NOTHROW(parse_shape(kc, s));
}

TEST_CASE("the roofline sets a reading against the floor and tells starved from contended") {
    Ceilings c;
    c.copy_gbps = 4000;
    c.fp32_tflops = 60;
    const Work w{400e6, 1e9}; // 400 MB: a 0.1 ms floor at 4000 GB/s
    const Stats tight = Stats::of(std::vector<double>{0.3, 0.3, 0.3, 0.3});
    RooflineReading r = roofline(w, tight, c);
    CHECK(r.floor_ms == doctest::Approx(0.1));
    CHECK(r.ratio == doctest::Approx(3.0));
    CHECK(r.achieved_gbps == doctest::Approx(400e6 / 0.3e-3 / 1e9));
    CHECK(r.bandwidth_share == doctest::Approx(1.0 / 3));
    CHECK(r.achieved_tflops == doctest::Approx(1e9 / 0.3e-3 / 1e12));
    CHECK(r.flops_share == doctest::Approx(r.achieved_tflops / 60));
    CHECK(contains(r.verdict, "starved"));
    const std::string text = format_roofline(r, "A");
    CHECK(contains(text,
                   "roofline A: 400.0 MB moved, 1.000 GFLOP: 1333.3 GB/s = 33.3% of 4000.0"));
    CHECK(contains(text, "floor A 0.1 ms (bytes / copy bandwidth), measured 0.3 ms "
                         "(median), ratio 3.00, spread 0.0%: starved"));
    r = roofline(w, Stats::of(std::vector<double>{0.1, 0.3, 0.2, 0.5}), c);
    CHECK(contains(r.verdict, "wide spread"));
    r = roofline(w, Stats::of(std::vector<double>{0.11, 0.11, 0.11}), c);
    CHECK(r.verdict == "near the bandwidth floor");
    c.fp32_tflops = 0;
    CHECK(contains(format_roofline(roofline(w, tight, c)), "TFLOP/s (unknown)"));
    // A decode-sized launch: the floor is microseconds and still printed with its digits.
    const std::string tiny = format_roofline(roofline({86e3, 0}, tight, {4146.6, 0, 0}));
    CHECK(contains(tiny, "floor 2.074e-05 ms"));
}

TEST_CASE("ABBA alternates the arms and takes the ratio per pair") {
    CHECK(abba_order(1) == "AB");
    CHECK(abba_order(3) == "ABBAAB");
    CHECK_THROWS_AS(abba_order(0), ConfigError);
    std::vector<Stats> a{Stats::of(std::vector<double>{1, 1}),
                         Stats::of(std::vector<double>{2, 2})};
    std::vector<Stats> b{Stats::of(std::vector<double>{3, 3}),
                         Stats::of(std::vector<double>{3, 3})};
    const AbbaResult r = summarize_abba(2, a, b);
    CHECK(r.order == "ABBA");
    CHECK(r.a.samples.size() == 4);
    CHECK(r.ratio.samples == std::vector<double>{3.0, 1.5});
    CHECK(r.ratio.median == 2.25);
    CHECK_THROWS_AS(summarize_abba(3, a, b), Error);
    const AbbaArm arm_a{"RMS_BLOCK=256", {}, {"GPU", "sm_90", "RMS_BLOCK=256", "base", "abc"}};
    const AbbaArm arm_b{
        "RMS_BLOCK=1024", {}, {"GPU", "sm_90", "RMS_BLOCK=1024", "base", "abc"}};
    const std::string text = format_abba(r, arm_a, arm_b);
    CHECK(contains(text,
                   "B = RMS_BLOCK=1024   gpu=GPU (sm_90) defines=RMS_BLOCK=1024 tier=base "
                   "src=abc"));
    CHECK(contains(text, "run 1 A reps ms: 1.0000 1.0000"));
    CHECK(contains(text, "run 3 B reps ms: 3.0000 3.0000"));
    CHECK(contains(text, "ratio B/A 2.2500 (per pair: 3.0000 1.5000;"));
}

TEST_CASE("kjit bench and kjit digest name usage errors and exit 2") {
    Run r = run_kjit("bench rms_nrom");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "no bench or digest case for kernel 'rms_nrom' (known: rms_norm, "
                          "conv1d, conv1d_update, conv1d_cl, delta_rule)"));
    r = run_kjit("bench rms_norm --shape rows=8");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "bad shape 'rows=8': n is missing"));
    r = run_kjit("bench rms_norm --dtype f16");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "unknown dtype 'f16' (known: f32, bf16)"));
    r = run_kjit("bench rms_norm --vs 9X=1");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "bad define '9X=1'"));
    r = run_kjit("digest record rms_norm --shapes 'rows=1,n=8;rows=2'");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "bad shape 'rows=2': n is missing"));
    r = run_kjit("digest");
    CHECK(r.code == 2);
    r = run_kjit("digest check rms_norm --file /nonexistent/kjit.toml");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "/nonexistent/kjit.toml: error: cannot read baseline file"));
}

TEST_CASE("kjit bench and kjit digest without a driver exit 2 and say so") {
    const std::string env = "KJIT_DRIVER_LIBRARY=/nonexistent/libcuda.so.1";
    Run r = run_kjit("bench rms_norm", env);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(
        contains(r.out, "kjit: error: no CUDA driver: cannot load /nonexistent/libcuda.so.1"));
    r = run_kjit("digest record rms_norm --file /nonexistent/dir/x.toml", env);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "no CUDA driver"));
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("bench times rms_norm directly and as a graph with L2 flush and input rotation and many calls per repetition") {
    KJIT_REQUIRE_DEVICE();
    test::GpuEngine gpu;
    const Device& device = gpu.device;
    Engine& engine = gpu.engine;
    const KernelContract& kc = kernel_contract("rms_norm");
    const CasePlan plan = plan_case(kc, parse_shape(kc, "rows=256,n=7168"), DType::f32);
    const auto arms = prepare_arms(engine, kc, {kc.defines}, device);
    CHECK(arms[0].provenance.defines == "RMS_BLOCK=256 RMS_WARP_ROWS=0");
    CHECK(arms[0].provenance.source_hash.size() == 12);
    CaseBuffers buffers(plan, 1, 2);
    for (bool graph : {false, true}) {
        BenchOptions o;
        o.warmup = 1;
        o.reps = 5;
        o.graph = graph;
        o.flush_l2 = true;
        o.input_sets = 2;
        std::vector<int> selected;
        o.select_inputs = [&](int set) {
            selected.push_back(set);
            buffers.select(set);
        };
        Bench bench(device, o);
        CHECK(bench.flush_bytes() >= 2 * static_cast<std::size_t>(device.attribute(
                                             CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)));
        const Stats s = bench.run(case_launch(arms[0], plan, buffers));
        CHECK(s.samples.size() == 5);
        CHECK(s.min > 0);
        CHECK(s.max < 100);
        CHECK(selected.size() == (graph ? 2u : 6u));
        MESSAGE((graph ? "graph " : "direct ") << s.summary());
    }
    // calls: each repetition launches the sequence `calls` times (one graph holds them all) and
    // a sample is the time per call, below one call per graph launch for a decode-size row.
    const CasePlan small = plan_case(kc, parse_shape(kc, "rows=1,n=1024"), DType::f32);
    CaseBuffers small_buffers(small, 1, 1);
    double one_call = 0;
    for (int calls : {1, 32}) {
        BenchOptions o;
        o.warmup = 2;
        o.reps = 7;
        o.graph = true;
        o.calls = calls;
        Bench bench(device, o);
        CHECK(contains(bench.describe(), "calls " + std::to_string(calls)));
        int enqueued = 0;
        const LaunchSequence one = case_launch(arms[0], small, small_buffers);
        const Stats s = bench.run([&](CUstream st) {
            ++enqueued;
            one(st);
        });
        CHECK(enqueued == calls); // captured once: one graph of `calls` launches
        MESSAGE("graph, " << calls << " calls per repetition, per call: " << s.summary());
        if (calls == 1)
            one_call = s.median;
        else
            CHECK(s.median < one_call);
    }
    BenchOptions direct;
    direct.warmup = 1;
    direct.reps = 3;
    direct.calls = 4;
    int enqueued = 0;
    Bench(device, direct).run([&](CUstream) { ++enqueued; });
    CHECK(enqueued == 16);
    direct.calls = 0;
    CHECK_THROWS_WITH_AS(Bench(device, direct), doctest::Contains("calls >= 1"), ConfigError);
    const Ceilings c = measure_ceilings(device);
    MESSAGE("d2d copy " << c.copy_gbps << " GB/s, fp32 peak " << c.fp32_tflops << " TFLOP/s");
    CHECK(c.copy_gbps > 100);
}

} // TEST_SUITE
