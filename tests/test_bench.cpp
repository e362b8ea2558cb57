#include "tests/support.hpp"
#include "jit/sources.hpp"
#include "tuning/abba.hpp"
#include "tuning/bench.hpp"
#include "tuning/digest.hpp"
#include "kernels/registry.hpp"
#include "tuning/case_arms.hpp"
#include "kernels/numeric.hpp"
#include "tuning/numeric.hpp"
#include "tuning/roofline.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>

using namespace kjit;

namespace {
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit;

std::uint32_t bits_at(const HostBuffer& b, std::size_t i) {
    std::uint32_t v = 0;
    std::memcpy(&v, b.bytes.data() + i * dtype_size(b.dtype), dtype_size(b.dtype));
    return v;
}

void set_bits(HostBuffer& b, std::size_t i, std::uint32_t v) {
    std::memcpy(b.bytes.data() + i * dtype_size(b.dtype), &v, dtype_size(b.dtype));
}

/// The define that sets rms_norm's reduction width: RMS_WIDTH where the kernel has that knob
/// (RMS_BLOCK is then launch geometry only and bit-free), else RMS_BLOCK, which sets both.
std::string rms_norm_width_knob() {
    const std::string& text = SourceSet::embedded().kernel("rms_norm").text;
    return text.find("RMS_WIDTH") != std::string::npos ? "RMS_WIDTH" : "RMS_BLOCK";
}

Baseline sample_baseline() {
    Baseline b;
    b.kernel = "rms_norm";
    b.seed = 7;
    BaselineCase c;
    c.shape = "rows=1,n=7168";
    c.dtype = DType::f32;
    c.defines = {{"RMS_BLOCK", "256"}};
    c.gpu = "NVIDIA H200 \"test\"";
    c.arch = "sm_90";
    c.tier = "base";
    c.source_hash = "e07df706f785";
    c.outputs = {{"y", DType::f32, 7168, 0x0123456789abcdefull}};
    b.cases.push_back(c);
    c.shape = "rows=4096,n=7168";
    c.dtype = DType::bf16;
    c.defines = {};
    c.outputs = {{"y", DType::bf16, 4096ull * 7168, 0xfedcba9876543210ull},
                 {"stats", DType::f32, 4096, 0}};
    b.cases.push_back(c);
    return b;
}
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

    const Stats even = Stats::of(std::vector<double>{10, 1, 3, 2});
    CHECK(even.median == 2.5); // the mean of the two middle samples
    CHECK(even.mean == 4);
    const Stats one = Stats::of(std::vector<double>{0.25});
    CHECK(one.stddev == 0);
    CHECK(one.median == 0.25);
    CHECK_THROWS_AS(Stats::of(std::vector<double>{}), Error);
}

TEST_CASE("generator inputs are fixed bits for a fixed seed in f32 and bf16") {
    // Documented values (kernels/numeric.hpp): uniform(1, 0) and uniform(1, 1).
    const HostBuffer f = generated_buffer("x", DType::f32, 4, 1);
    CHECK(f.bytes.size() == 16);
    CHECK(bits_at(f, 0) == std::bit_cast<std::uint32_t>(0.53260350227355957f));
    CHECK(bits_at(f, 1) == std::bit_cast<std::uint32_t>(-0.74793803691864014f));
    CHECK(format_element(f, 0) == "0.532603502 (0x3f0858b4)");
    const HostBuffer h = generated_buffer("x", DType::bf16, 4, 1);
    CHECK(h.bytes.size() == 8);
    CHECK(bits_at(h, 0) == to_bf16(0.53260350227355957f));
    CHECK(format_element(h, 0) == "0.53125 (0x3f08)");
    // The same seed gives the same bytes on every run; the whole stream is pinned by its
    // digest.
    const HostBuffer big = generated_buffer("x", DType::f32, 1 << 16, 1);
    CHECK(big.bytes == generated_buffer("x", DType::f32, 1 << 16, 1).bytes);
    CHECK(hex64(digest(big)) == "062b0eeb8acf3555");
    CHECK(digest(generated_buffer("x", DType::f32, 1 << 16, 2)) != digest(big));
}

TEST_CASE("xxh3-64 digests of known buffers") {
    HostBuffer empty;
    CHECK(digest(empty) == 0x2d06800538d394c2ull); // XXH3_64bits of no bytes
    HostBuffer b = canary_buffer("y", DType::f32, 3);
    const std::uint64_t d = digest(b);
    CHECK(hex64(d) == "4e3cbc86af803ec1");
    set_bits(b, 2, bits_at(b, 2) ^ 1u); // one bit anywhere changes the digest
    CHECK(digest(b) != d);
    CHECK(hex64(0x00000000000000abull) == "00000000000000ab");
    CHECK(parse_hex64("0123456789ABCDEF") == 0x0123456789abcdefull);
    CHECK_FALSE(parse_hex64("0123456789abcde").has_value());
    CHECK_FALSE(parse_hex64("0123456789abcdeg").has_value());
}

TEST_CASE("outputs still holding the canary are reported as unwritten") {
    CHECK(canary_bits(DType::f32) == 0xffa5a5a5u);
    CHECK(canary_bits(DType::bf16) == 0xffa5u);
    // The canary is a signalling NaN: bf16 rounding of any NaN sets the quiet bit.
    CHECK(to_bf16(std::bit_cast<float>(0xffa5ffffu)) != 0xffa5u);
    for (DType dtype : {DType::f32, DType::bf16}) {
        HostBuffer b = canary_buffer("y", dtype, 10);
        CHECK(find_unwritten(b).count == 10);
        for (std::size_t i = 0; i < 10; ++i)
            if (i != 4 && i != 7)
                set_bits(b, i, 0);
        const Unwritten u = find_unwritten(b);
        CHECK(u.count == 2);
        CHECK(u.first == 4);
        for (std::size_t i = 0; i < 10; ++i)
            set_bits(b, i, 0);
        CHECK(find_unwritten(b).count == 0);
    }
}

TEST_CASE("the first difference names the index and both values") {
    const HostBuffer a = generated_buffer("y", DType::f32, 100, 3);
    HostBuffer b = a;
    CHECK_FALSE(first_difference(a, b).has_value());
    set_bits(b, 41, bits_at(b, 41) + 1);
    set_bits(b, 90, 0);
    const auto d = first_difference(a, b);
    REQUIRE(d.has_value());
    CHECK(d->index == 41);
    CHECK(d->count == 2);
    CHECK(d->reference == format_element(a, 41));
    CHECK(d->actual == format_element(b, 41));
    CHECK(d->reference != d->actual);
    CHECK_THROWS_AS(first_difference(a, generated_buffer("y", DType::f32, 99, 3)), Error);
    CHECK_THROWS_AS(first_difference(a, generated_buffer("y", DType::bf16, 100, 3)), Error);
}

TEST_CASE("a baseline file round trips through save and load") {
    test::TempDir dir;
    const Baseline b = sample_baseline();
    const auto path = dir.path() / "sub" / "rms_norm.toml";
    b.save(path);
    const Baseline back = Baseline::load(path);
    CHECK(back.kernel == b.kernel);
    CHECK(back.seed == 7);
    CHECK(back.file == path.string());
    REQUIRE(back.cases.size() == 2);
    for (std::size_t i = 0; i < 2; ++i)
        CHECK(back.cases[i].same_record(b.cases[i]));
    CHECK(back.cases[0].line > 0);
    CHECK(back.to_toml() == b.to_toml());
    CHECK(contains(b.to_toml(), "digest = \"0123456789abcdef\""));
    CHECK(contains(b.to_toml(), "defines = { RMS_BLOCK = \"256\" }"));
    CHECK(back.find("rows=4096,n=7168", DType::bf16) != nullptr);
    CHECK(back.find("rows=4096,n=7168", DType::f32) == nullptr);

    Baseline more = back;
    BaselineCase c = b.cases[0];
    c.outputs[0].digest = 42;
    more.put(c); // replaces the case of the same shape and dtype
    CHECK(more.cases.size() == 2);
    CHECK(more.cases[0].outputs[0].digest == 42);
    c.shape = "rows=2,n=7168";
    more.put(c);
    CHECK(more.cases.size() == 3);
}

TEST_CASE("malformed baseline files are reported at file and line and column") {
    const auto fails = [](const std::string& text, const std::string& want) {
        INFO(text);
        try {
            (void)Baseline::parse(text, "base.toml");
            FAIL("parsed");
        } catch (const ConfigError& e) {
            CHECK(e.file == "base.toml");
            CHECK(std::string(e.what()) == "base.toml:" + want);
        }
    };
    const std::string head = "kernel = \"rms_norm\"\n[[case]]\nshape = \"rows=1,n=8\"\n"
                             "dtype = \"f32\"\n";
    const std::string out = "outputs = [ { name = \"y\", dtype = \"f32\", count = 8, digest = "
                            "\"0123456789abcdef\" } ]\n";
    CHECK(Baseline::parse(head + out, "base.toml").cases.size() == 1);
    fails("kernel = \"rms_norm\"\n[[case]\n", "2:8: error: Error while parsing table header: "
                                              "expected ']', saw '\\n'");
    fails("seed = 1\n",
          "1:1: error: missing key 'kernel' (the kernel this baseline belongs to)");
    fails("kernel = 3\n", "1:10: error: 'kernel' must be a string");
    fails("kernel = \"rms_norm\"\nkernal = 1\n",
          "2:1: error: unknown key 'kernal' in the baseline file; did you mean 'kernel'?");
    fails("kernel = \"rms_norm\"\nzzzz = 1\n",
          "2:1: error: unknown key 'zzzz' in the baseline file (known: kernel, seed, case)");
    fails("kernel = \"rms_norm\"\nseed = -1\n",
          "2:8: error: 'seed' must be a non-negative integer");
    fails(
        head + "shap = 1\n" + out,
        "5:1: error: unknown key 'shap' in [[case]]; did you mean 'shape'?");
    fails("kernel = \"rms_norm\"\n[[case]]\ndtype = \"f32\"\n" + out,
          "2:1: error: [[case]] needs 'shape'");
    fails(head + "outputs = []\n",
          "5:11: error: 'outputs' must be a non-empty array of { name, dtype, count, digest } "
          "tables");
    fails(head + "outputs = [ { name = \"y\", dtype = \"f16\", count = 8, digest = "
                 "\"0123456789abcdef\" } ]\n",
          "5:35: error: unknown dtype 'f16' (known: f32, bf16)");
    fails(head +
              "outputs = [ { name = \"y\", dtype = \"f32\", count = 8, digest = \"123\" } ]\n",
          "5:62: error: 'digest' must be 16 hex digits (xxh3-64), not '123'");
    fails(
        head +
            "outputs = [ { name = \"y\", dtype = \"f32\", digest = \"0123456789abcdef\" } ]\n",
        "5:13: error: an output needs 'count'");
    fails(head + "defines = { 9X = 1 }\n" + out,
          "5:13: error: bad define '9X=1': expected NAME=VALUE with NAME a C identifier");
    fails(head + out + "[[case]]\nshape = \"rows=1,n=8\"\ndtype = \"f32\"\n" + out,
          "6:1: error: duplicate case shape 'rows=1,n=8' dtype f32");
    CHECK_THROWS_WITH_AS(Baseline::load("/nonexistent/kjit/base.toml"),
                         doctest::Contains("/nonexistent/kjit/base.toml: error: cannot read "
                                           "baseline file"),
                         ConfigError);
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
                         "conv1d, delta_rule)",
                         NotFoundError);
    const Defines d =
        merge_defines(kc.defines, std::vector<std::string>{"RMS_BLOCK=1024", "X"});
    CHECK(defines_text(d) == "RMS_BLOCK=1024 X=1");
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
                          "conv1d, delta_rule)"));
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

TEST_CASE("kjit digest check reports a malformed baseline at file and line and column") {
    test::TempDir dir;
    const auto file = dir.path() / "bad.toml";
    std::ofstream(file)
        << "kernel = \"rms_norm\"\n[[case]]\nshape = \"rows=1,m=8\"\ndtype = \"f32\"\n"
           "outputs = [ { name = \"y\", dtype = \"f32\", count = 8, digest = "
           "\"0123456789abcdef\" } ]\n";
    Run r = run_kjit("digest check rms_norm --file " + file.string());
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, file.string() +
                              ":2:1: error: bad shape 'rows=1,m=8': rms_norm has no "
                              "shape key 'm'"));
    std::ofstream(file) << "kernel = \"rms_norm\"\nseed = \"one\"\n";
    r = run_kjit("digest check rms_norm --file " + file.string());
    CHECK(r.code == 2);
    CHECK(
        contains(r.out, file.string() + ":2:8: error: 'seed' must be a non-negative integer"));
    std::ofstream(file) << "kernel = \"softmax\"\n";
    r = run_kjit("digest check rms_norm --file " + file.string());
    CHECK(r.code == 2);
    CHECK(contains(r.out, "the baseline is for kernel 'softmax', not 'rms_norm'"));
}

TEST_CASE("the recorded baselines parse and cover single and multi row shapes") {
    const std::filesystem::path dir = KJIT_SOURCE_DIR "/bench/baselines";
    if (!std::filesystem::exists(dir / "rms_norm.toml")) {
        MESSAGE("no recorded baseline yet: " << (dir / "rms_norm.toml").string());
        return;
    }
    const Baseline b = Baseline::load(dir / "rms_norm.toml");
    CHECK(b.kernel == "rms_norm");
    const std::string now = SourceSet::embedded().kernel("rms_norm").hash.hex().substr(0, 12);
    for (const BaselineCase& c : b.cases)
        if (c.source_hash != now)
            MESSAGE("case " << c.shape << " was recorded from source " << c.source_hash
                            << ", the kernel is now " << now << ": kjit digest check on a GPU");
    const KernelContract& kc = kernel_contract("rms_norm");
    bool single = false, multi = false;
    for (const BaselineCase& c : b.cases) {
        const ShapeValues s = parse_shape(kc, c.shape);
        (s.at("rows") == 1 ? single : multi) = true;
    }
    CHECK(single);
    CHECK(multi);
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("bench times rms_norm directly and as a graph with L2 flush and input rotation") {
    KJIT_REQUIRE_DEVICE();
    test::GpuEngine gpu;
    const Device& device = gpu.device;
    Engine& engine = gpu.engine;
    const KernelContract& kc = kernel_contract("rms_norm");
    const CasePlan plan = plan_case(kc, parse_shape(kc, "rows=256,n=7168"), DType::f32);
    const auto arms = prepare_arms(engine, kc, {kc.defines}, device);
    CHECK(arms[0].provenance.defines == "RMS_BLOCK=256");
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
    const Ceilings c = measure_ceilings(device);
    MESSAGE("d2d copy " << c.copy_gbps << " GB/s, fp32 peak " << c.fp32_tflops << " TFLOP/s");
    CHECK(c.copy_gbps > 100);
}

TEST_CASE("digests repeat across runs and another reduction width differs at a named index") {
    KJIT_REQUIRE_DEVICE();
    test::GpuEngine gpu;
    const Device& device = gpu.device;
    Engine& engine = gpu.engine;
    const KernelContract& kc = kernel_contract("rms_norm");
    const ShapeValues shape = parse_shape(kc, "rows=64,n=7168");
    const std::string knob = rms_norm_width_knob();
    std::vector<Defines> sets{{{"RMS_BLOCK", "256"}}, {{"RMS_BLOCK", "256"}, {knob, "512"}}};
    if (knob == "RMS_WIDTH")
        sets.push_back({{"RMS_BLOCK", "1024"}}); // a wider block after the same reduction
    const auto arms = prepare_arms(engine, kc, sets, device);
    std::vector<CasePlan> plans;
    for (const Defines& d : sets)
        plans.push_back(plan_case(kc, shape, DType::f32, d));
    CaseBuffers buffers(plans[0], 1);
    const auto first = run_case_once(arms[0], plans[0], buffers);
    const auto again = run_case_once(arms[0], plans[0], buffers);
    const auto other = run_case_once(arms[1], plans[1], buffers);
    CHECK(find_unwritten(first[0]).count == 0);
    CHECK(digest(first[0]) == digest(again[0]));
    CHECK(digest(first[0]) != digest(other[0]));
    const auto d = first_difference(first[0], other[0]);
    REQUIRE(d.has_value());
    MESSAGE(knob << "=512: first difference at " << d->index << ": " << d->reference << " vs "
                 << d->actual);
    if (arms.size() == 3) {
        const auto wide = run_case_once(arms[2], plans[2], buffers);
        CHECK(digest(first[0]) == digest(wide[0]));
        CHECK_FALSE(first_difference(first[0], wide[0]).has_value());
    }

    // A launch over one row fewer than the buffers hold leaves the last row unwritten.
    const CasePlan short_plan =
        plan_case(kc, parse_shape(kc, "rows=63,n=7168"), DType::f32, arms[0].defines);
    buffers.fill_canary();
    const Stream stream;
    enqueue_case(short_plan, arms[0].functions(short_plan), buffers.pointers(), stream.handle());
    stream.synchronize();
    const Unwritten u = find_unwritten(buffers.download()[0]);
    CHECK(u.count == 7168);
    CHECK(u.first == 63u * 7168);
}

TEST_CASE("kjit digest record then check prints IDENTICAL and DIFFERS with the index") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    const std::string file = (dir.path() / "rms_norm.toml").string();
    Run r = run_kjit("digest record rms_norm --file " + file +
                     " --shapes 'rows=1,n=7168;rows=64,n=7168' --dtype f32 -D RMS_BLOCK=256");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "digest record: wrote 2 case(s)"));
    r = run_kjit("digest check rms_norm --file " + file);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "rows=64,n=7168       f32   y    IDENTICAL"));
    const std::string knob = rms_norm_width_knob();
    r = run_kjit("digest check rms_norm --file " + file + " -D " + knob + "=512");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "DIFFERS"));
    CHECK(contains(r.out, "first difference at index"));
    if (knob == "RMS_WIDTH") {
        r = run_kjit("digest check rms_norm --file " + file + " -D RMS_BLOCK=1024");
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(contains(r.out, "digest check: 2 identical, 0 differ"));
    }
    r = run_kjit("bench rms_norm --shape rows=64,n=7168 --reps 3 --warmup 1 --vs RMS_BLOCK=512 "
                 "--pairs 1");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "ratio B/A"));
    CHECK(contains(r.out, "floor A"));
}

} // TEST_SUITE
