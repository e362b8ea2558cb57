#include "jit/sources.hpp"
#include "kernels/numeric.hpp"
#include "kernels/registry.hpp"
#include "tests/support.hpp"
#include "tuning/case_arms.hpp"
#include "tuning/baseline_policy.hpp"
#include "tuning/digest.hpp"
#include "tuning/digest_run.hpp"

#include "tests/doctest.hpp"

#include <bit>
#include <cstring>
#include <fstream>

using namespace kjit;

namespace {
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit;
using kjit::test::run_kjit_in;

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

TEST_CASE("a record runs the contract's digest shapes in every dtype unless asked for fewer") {
    const KernelContract& kc = kernel_contract("rms_norm");
    const std::vector<DigestCase> all = record_cases(kc, {});
    REQUIRE(all.size() == kc.digest_shapes.size() * kc.dtypes.size());
    CHECK(all[0].shape == "rows=1,n=7168");
    CHECK(all[0].dtype == DType::f32);
    CHECK(all[1].shape == "rows=1,n=7168");
    CHECK(all[1].dtype == DType::bf16);
    CHECK(all[0].values.at("n") == 7168);
    const std::vector<DigestCase> some =
        record_cases(kc, {{"n=8,rows=2;rows=3,n=8", "rows=4,n=8"}, {"bf16"}});
    REQUIRE(some.size() == 3);
    CHECK(some[0].shape == "rows=2,n=8"); // canonical: the contract's key order
    CHECK(some[2].shape == "rows=4,n=8");
    for (const DigestCase& c : some)
        CHECK(c.dtype == DType::bf16);
    CHECK_THROWS_WITH_AS(record_cases(kc, {{"rows=1,n=8;rows=2"}, {}}),
                         doctest::Contains("bad shape 'rows=2': n is missing"), ConfigError);
    CHECK_THROWS_WITH_AS(record_cases(kc, {{}, {"f16"}}),
                         doctest::Contains("unknown dtype 'f16' (known: f32, bf16)"),
                         ConfigError);
    const DigestRecordPlan plan = plan_digest_record(
        kc, {{"rows=2,n=8"}, {"f32"}}, std::vector<std::string>{"RMS_BLOCK=1024"});
    REQUIRE(plan.plans.size() == 1);
    CHECK(plan.defines.at("RMS_BLOCK") == "1024");
    CHECK(plan.plans[0].defines.at("RMS_BLOCK") == "1024");
    CHECK(plan.plans[0].entry() == "rms_norm_f32");
}

TEST_CASE("a record adds to the kernel's baseline and refuses another kernel's or seed's") {
    const KernelContract& kc = kernel_contract("rms_norm");
    test::TempDir dir;
    const std::string file = (dir.path() / "rms_norm.toml").string();
    const BaselineLocation none = locate_baseline(kc.name, file);
    CHECK(none.named);
    CHECK_FALSE(none.exists);
    CHECK(none.path == file);
    const Baseline fresh = baseline_to_record(none, kc, 5);
    CHECK(fresh.kernel == "rms_norm");
    CHECK(fresh.seed == 5);
    CHECK(fresh.cases.empty());

    const DigestCase c{"rows=1,n=3", {{"rows", 1}, {"n", 3}}, DType::f32};
    std::vector<HostBuffer> outputs{generated_buffer("y", DType::f32, 3, 9)};
    const Provenance p{"GPU", "sm_90", "RMS_BLOCK=256", "base", "0123456789ab"};
    const BaselineCase rec = recorded_case(c, {{"RMS_BLOCK", "256"}}, p, outputs);
    CHECK(rec.shape == "rows=1,n=3");
    CHECK(rec.defines.at("RMS_BLOCK") == "256");
    CHECK(rec.gpu == "GPU");
    CHECK(rec.arch == "sm_90");
    CHECK(rec.tier == "base");
    CHECK(rec.source_hash == "0123456789ab");
    REQUIRE(rec.outputs.size() == 1);
    CHECK(rec.outputs[0] == OutputDigest{"y", DType::f32, 3, digest(outputs[0])});
    CHECK(record_writes_file(0));
    CHECK_FALSE(record_writes_file(1));

    Baseline b = fresh;
    b.put(rec);
    b.save(file);
    const BaselineLocation there = locate_baseline(kc.name, file);
    CHECK(there.exists);
    CHECK(baseline_to_record(there, kc, 5).cases.size() == 1);
    CHECK_THROWS_WITH_AS(baseline_to_record(there, kc, 6),
                         doctest::Contains((file + ": error: the baseline was recorded with seed "
                                                   "5, not 6 (remove it to start afresh)")
                                               .c_str()),
                         ConfigError);
    CHECK_THROWS_WITH_AS(baseline_to_record(there, kernel_contract("conv1d"), 5),
                         doctest::Contains("the baseline is for kernel 'rms_norm', not 'conv1d'"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(baseline_to_check(there, kernel_contract("conv1d")),
                         doctest::Contains("the baseline is for kernel 'rms_norm', not 'conv1d'"),
                         ConfigError);
    CHECK(baseline_to_check(there, kc).cases.size() == 1);
}

TEST_CASE("a check reruns the recorded cases it is asked for with the overrides applied") {
    const KernelContract& kc = kernel_contract("rms_norm");
    Baseline b = sample_baseline();
    b.file = "base.toml";
    std::vector<CheckedCase> all = checked_cases(b, kc, {});
    REQUIRE(all.size() == 2);
    CHECK(all[0].recorded == &b.cases[0]);
    CHECK(all[0].key.shape == "rows=1,n=7168");
    CHECK(all[0].defines == b.cases[0].defines);
    CHECK(all[1].key.dtype == DType::bf16);

    const std::vector<std::string> overrides{"RMS_BLOCK=1024"};
    std::vector<CheckedCase> one = checked_cases(b, kc, {{"n=7168,rows=4096"}, {}}, overrides);
    REQUIRE(one.size() == 1);
    CHECK(one[0].recorded == &b.cases[1]);
    CHECK(one[0].defines.at("RMS_BLOCK") == "1024");
    CHECK(checked_cases(b, kc, {{}, {"f32"}}).size() == 1);

    CHECK_THROWS_WITH_AS(checked_cases(b, kc, {{"rows=2,n=7168"}, {}}),
                         "base.toml: error: no recorded case for shape rows=2,n=7168 (record it "
                         "with kjit digest record --shapes rows=2,n=7168)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(checked_cases(b, kc, {{"rows=1,n=7168"}, {"bf16"}}),
                         doctest::Contains("no recorded case for shape rows=1,n=7168"),
                         ConfigError); // recorded in f32 only
    Baseline empty;
    empty.file = "base.toml";
    CHECK_THROWS_WITH_AS(checked_cases(empty, kc, {}),
                         "base.toml: error: the baseline records no case to check", ConfigError);
    CHECK_THROWS_WITH_AS(checked_cases(b, kc, {}, std::vector<std::string>{"9X=1"}),
                         doctest::Contains("bad define '9X=1'"), ConfigError);
    Baseline bad = b;
    bad.cases[1].shape = "rows=1,m=8";
    bad.cases[1].line = 12;
    bad.cases[1].column = 1;
    CHECK_THROWS_WITH_AS(checked_cases(bad, kc, {}),
                         doctest::Contains("base.toml:12:1: error: bad shape 'rows=1,m=8'"),
                         ConfigError);

    // One define set per distinct set: the recorded defines serve as the reference run.
    const DigestCheckPlan same = plan_digest_check(kc, b, {}, {});
    REQUIRE(same.define_sets.size() == 2); // the two cases recorded different defines
    CHECK(same.now_set == same.ref_set);
    CHECK(same.now_plans.size() == 2);
    const DigestCheckPlan over = plan_digest_check(kc, b, {}, overrides);
    // The checked set, shared by both cases, and each recorded one.
    CHECK(over.define_sets.size() == 3);
    CHECK(over.now_set[0] == over.now_set[1]);
    CHECK(over.now_set[0] != over.ref_set[0]);
    CHECK(over.now_plans[0].defines.at("RMS_BLOCK") == "1024");
    CHECK(over.ref_plans[0].defines.at("RMS_BLOCK") == "256");
}

TEST_CASE("an output is IDENTICAL only with the recorded digest and count and dtype") {
    const HostBuffer y = generated_buffer("y", DType::f32, 8, 1);
    const std::uint64_t d = digest(y);
    const OutputDigest same{"y", DType::f32, 8, d};
    CHECK(judge_output(&same, y, d) == DigestVerdict::identical);
    CHECK(judge_output(nullptr, y, d) == DigestVerdict::not_recorded);
    const OutputDigest other{"y", DType::f32, 8, d ^ 1};
    CHECK(judge_output(&other, y, d) == DigestVerdict::differs);
    const OutputDigest longer{"y", DType::f32, 9, d};
    CHECK(judge_output(&longer, y, d) == DigestVerdict::resized);
    const OutputDigest bf16{"y", DType::bf16, 8, d};
    CHECK(judge_output(&bf16, y, d) == DigestVerdict::resized);

    const Baseline b = sample_baseline();
    CHECK(recorded_output(b.cases[1], "stats") == &b.cases[1].outputs[1]);
    CHECK(recorded_output(b.cases[1], "z") == nullptr);

    CheckedRun run;
    run.outputs.resize(2);
    CHECK_FALSE(run.differs());
    DigestTally tally;
    tally.add(run);
    CHECK(tally.identical == 1);
    CHECK(tally.passed());
    run.outputs[1].verdict = DigestVerdict::not_recorded;
    run.outputs[0].unwritten = {3, 1};
    CHECK(run.differs());
    tally.add(run);
    CHECK(tally.identical == 1);
    CHECK(tally.differs == 1);
    CHECK(tally.unwritten == 1);
    CHECK_FALSE(tally.passed());
    DigestTally unwritten_only;
    run.outputs[1].verdict = DigestVerdict::identical;
    unwritten_only.add(run);
    CHECK(unwritten_only.identical == 1);
    CHECK_FALSE(unwritten_only.passed());
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

TEST_CASE("kjit digest reads bench/baselines/KERNEL.toml under the current directory or "
          "--baseline") {
    test::TempDir dir;
    const std::string want =
        (std::filesystem::canonical(dir.path()) / "bench" / "baselines" / "rms_norm.toml").string();
    Run r = run_kjit_in(dir.path(), "digest check rms_norm");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, want + ": error: cannot read baseline file: it does not exist (the "
                                 "default: bench/baselines/rms_norm.toml under the current "
                                 "directory, or --baseline FILE; kjit digest record rms_norm "
                                 "writes it)"));
    r = run_kjit("digest check rms_norm --baseline " + want);
    CHECK(r.code == 2);
    CHECK(contains(r.out, want + ": error: cannot read baseline file: it does not exist (kjit "
                                 "digest record rms_norm writes it)"));

    // The file found is the one under the working directory: its own mistakes are named.
    std::filesystem::create_directories(dir.path() / "bench" / "baselines");
    std::ofstream(want) << "kernel = \"rms_norm\"\n[[case]]\nshape = \"rows=1,m=8\"\n"
                           "dtype = \"f32\"\noutputs = [ { name = \"y\", dtype = \"f32\", "
                           "count = 8, digest = \"0123456789abcdef\" } ]\n";
    r = run_kjit_in(dir.path(), "digest check rms_norm");
    CHECK(r.code == 2);
    CHECK(contains(r.out, want + ":2:1: error: bad shape 'rows=1,m=8'"));
    r = run_kjit_in(KJIT_SOURCE_DIR, "digest check rms_norm --baseline " + want);
    CHECK(r.code == 2);
    CHECK(contains(r.out, want + ":2:1: error: bad shape 'rows=1,m=8'"));

    // Run in kjit's source tree, it reads the recorded baselines there.
    const std::string tree = std::filesystem::canonical(KJIT_SOURCE_DIR).string();
    r = run_kjit_in(tree, "digest check rms_norm --shapes rows=2,n=5");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, tree + "/bench/baselines/rms_norm.toml: error: no recorded case for "
                                 "shape rows=2,n=5"));
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

TEST_CASE("kjit digest record writes bench/baselines under the current directory and check "
          "reads it") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    const std::string want =
        (std::filesystem::canonical(dir.path()) / "bench" / "baselines" / "rms_norm.toml").string();
    Run r = run_kjit_in(dir.path(), "digest record rms_norm --shapes rows=2,n=7168 --dtype f32");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "-> " + want + " (does not exist yet: a new file)\n"));
    CHECK(contains(r.out, "digest record: wrote 1 case(s) to " + want + " (1 in the file)"));
    CHECK(std::filesystem::exists(want));
    r = run_kjit_in(dir.path(), "digest record rms_norm --shapes rows=3,n=7168 --dtype f32");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "-> " + want + "\n"));
    CHECK(contains(r.out, "(2 in the file)"));
    r = run_kjit_in(dir.path(), "digest check rms_norm");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit digest check rms_norm against " + want + ": 2 case(s)"));
    CHECK(contains(r.out, "digest check: 2 identical, 0 differ"));
}

} // TEST_SUITE
