#include "tests/support.hpp"
#include "kernels/numeric.hpp"
#include "kernels/references.hpp"
#include "kernels/registry.hpp"
#include "tuning/bench_plan.hpp"
#include "tuning/numeric.hpp"
#include "tuning/selfcheck.hpp"
#include "tuning/sweep_judge.hpp"
#include "tuning/sweep_report.hpp"

#include "tests/doctest.hpp"

#include <cmath>

using namespace kjit;

TEST_SUITE("tuning") {

TEST_CASE("the input generator is a pure function of seed and index with pinned values") {
    CHECK(uniform(1, 0) == 0.53260350227355957f);
    CHECK(uniform(1, 1) == -0.74793803691864014f);
    CHECK(uniform(1, 1) != uniform(2, 1));
    std::vector<float> a(4096), b(4096);
    fill_uniform(a, 7);
    fill_uniform(b, 7);
    CHECK(a == b);
    double mean = 0;
    for (float v : a) {
        CHECK(v >= -1.0f);
        CHECK(v < 1.0f);
        mean += v;
    }
    CHECK(std::abs(mean / a.size()) < 0.05);
}

TEST_CASE("bf16 conversion rounds to nearest even and keeps NaN quiet") {
    CHECK(to_bf16(1.0f) == 0x3f80);
    CHECK(from_bf16(0x3f80) == 1.0f);
    // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even (1.0) wins; 1 + 3*2^-8 rounds up.
    CHECK(to_bf16(1.0f + 1.0f / 256) == 0x3f80);
    CHECK(to_bf16(1.0f + 3.0f / 256) == 0x3f82);
    CHECK(std::isnan(from_bf16(to_bf16(std::nanf("")))));
    CHECK(to_bf16(-2.0f) == 0xc000);
}

TEST_CASE("relative L2 error and the rms_norm reference") {
    const std::vector<double> want{3, 4}, same{3, 4}, off{3, 4.5};
    CHECK(relative_l2(same, want) == 0.0);
    CHECK(relative_l2(off, want) == doctest::Approx(0.1));
    const std::vector<double> nan{3, NAN};
    CHECK(std::isinf(relative_l2(nan, want)));
    // One row [3, 4], w = [1, 2]: mean square 12.5, y = x / sqrt(12.5) * w.
    std::vector<double> y(2);
    rms_norm_reference(want, std::vector<double>{1, 2}, y, 1, 2, 0.0);
    CHECK(y[0] == doctest::Approx(3 / std::sqrt(12.5)));
    CHECK(y[1] == doctest::Approx(8 / std::sqrt(12.5)));
}

TEST_CASE("a bench plan takes the contract's shape and dtype and defines unless given and arm B's") {
    const KernelContract& kc = kernel_contract("rms_norm");
    const BenchPlan one = plan_bench(kc, "", "", {}, {}, 3);
    CHECK(one.shape.at("rows") == 8192);
    CHECK(one.dtype == DType::f32);
    REQUIRE(one.sets.size() == 1);
    CHECK(one.sets[0].at("RMS_BLOCK") == "256");
    CHECK(one.work().bytes == (2.0 * 8192 * 7168 + 7168) * 4);
    const std::vector<std::string> a{"RMS_BLOCK=512"}, b{"RMS_BLOCK=1024"};
    const BenchPlan two = plan_bench(kc, "rows=4,n=8", "bf16", a, b, 1);
    CHECK(two.dtype == DType::bf16);
    REQUIRE(two.plans.size() == 2);
    CHECK(two.sets[0].at("RMS_BLOCK") == "512");
    CHECK(two.sets[1].at("RMS_BLOCK") == "1024");
    CHECK(two.plans[1].entry() == "rms_norm_bf16");
    CHECK_THROWS_AS(plan_bench(kc, "", "", {}, {}, 0), ConfigError);
    CHECK_THROWS_WITH_AS(plan_bench(kc, "rows=8", "", {}, {}, 1),
                         doctest::Contains("bad shape 'rows=8': n is missing"), ConfigError);
    CHECK_THROWS_WITH_AS(plan_bench(kc, "", "f16", {}, {}, 1),
                         doctest::Contains("unknown dtype 'f16'"), ConfigError);
    // Arms that size a buffer differently (a split-K workspace) share buffers as large as
    // either needs, and each counts its own bytes.
    KernelContract sized = kc;
    for (ContractArg& arg : sized.args)
        if (arg.name == "w")
            arg.count = "n * RMS_BLOCK / 256";
    sized.bytes = "4 * n * RMS_BLOCK / 256";
    const BenchPlan split = plan_bench(sized, "rows=2,n=8", "", {}, b, 1);
    CHECK(split.plans[0].find_buffer("w")->count == 8);
    CHECK(split.plans[1].find_buffer("w")->count == 32);
    CHECK(buffer_capacity(split.plans).find_buffer("w")->count == 32);
    CHECK(buffer_capacity(split.plans).find_buffer("x")->count == 16);
    CHECK(split.work(0).bytes == 32);
    CHECK(split.work(1).bytes == 128);
}

TEST_CASE("the check passes when the audit and every spec and every case passed") {
    CheckResult ok;
    ok.outputs = {{"y", 1e-7, 1e-5, 0}};
    CheckResult unwritten = ok;
    unwritten.outputs[0].unwritten = 3;
    CheckSummary s;
    CHECK(s.passed());
    s.add({ok, {}});
    CHECK(s.failed == 0);
    CHECK(s.passed());
    s.add({unwritten, {}});
    s.add({std::nullopt, "launch refused"});
    CHECK(s.failed == 2);
    CHECK_FALSE(s.passed());
    CheckSummary audit;
    audit.audit_passed = false;
    CHECK_FALSE(audit.passed());
    CheckSummary unprepared;
    unprepared.unprepared = 1;
    CHECK_FALSE(unprepared.passed());
    CHECK_FALSE(CheckOutcome{std::nullopt, "x"}.passed());
}

TEST_CASE("a sweep row passes when it ran and its check holds and the outputs go beside the cwd") {
    SweepResult r;
    r.rows.resize(5);
    r.rows[0].check = "IDENTICAL";
    r.rows[1].check = "within tolerance 1.00e-07";
    r.rows[2].check = "-";
    r.rows[3].check = "DIFFERS (y)";
    r.rows[4].error = "compile failed";
    r.rows[4].check = "FAILED";
    for (int i = 0; i < 3; ++i)
        CHECK(row_passed(r.rows[i]));
    CHECK_FALSE(row_passed(r.rows[3]));
    CHECK_FALSE(row_passed(r.rows[4]));
    CHECK(failed_rows(r, false) == 2);
    CHECK(failed_rows(r, true) == 1); // a dry run judges the compiles only
    CHECK(sweep_out_dir("kernel_src/rms_norm.sweep.toml", "") == "rms_norm.sweep.out");
    CHECK(sweep_out_dir("kernel_src/rms_norm.sweep.toml", "out/x") == "out/x");
}

} // TEST_SUITE
