#include "core/flags.hpp"
#include "tests/support.hpp"
#include "tuning/sweep_plan.hpp"
#include "tuning/sweep_runner.hpp"

#include "tests/doctest.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>

using namespace kjit;

namespace {
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit;
using kjit::test::run_kjit_in;
const std::string kFixtures = KJIT_SOURCE_DIR "/tests/fixtures/sweep/";

/// A user's kernel tree: a copy of rms_norm under another name, which has no registered
/// contract, and a sweep that declares its launch inline and checks it against the float64
/// reference registered as "rms_norm".
void write_user_tree(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    fs::create_directories(dir / "kernels");
    fs::copy_file(KJIT_SOURCE_DIR "/kernel_src/rms_norm.cu", dir / "kernels" / "my_rms_norm.cu");
    fs::copy_file(KJIT_SOURCE_DIR "/kernel_src/common.cuh", dir / "kernels" / "common.cuh");
    fs::copy_file(KJIT_SOURCE_DIR "/kernel_src/pdl.cuh", dir / "kernels" / "pdl.cuh");
    std::ofstream(dir / "inline.toml") << R"toml(kernel = "my_rms_norm"
[shape]
rows = 64
n = 1000
[defines]
RMS_BLOCK = 128
[sweep]
RMS_WIDTH = [256, 512, 1024]
[launch]
entry = "rms_norm_f32"
grid = "rows"
block = 128
[[args]]
name = "x"
type = "f32*"
count = "rows * n"
[[args]]
name = "w"
type = "f32*"
count = "n"
[[args]]
name = "y"
type = "f32*"
count = "rows * n"
output = true
[[args]]
name = "rows"
type = "i32"
value = "rows"
[[args]]
name = "n"
type = "i32"
value = "n"
[[args]]
name = "eps"
type = "f32"
value = "1e-6"
[check]
mode = "tolerance"
rtol = 1e-6
reference = "rms_norm"
[bench]
bytes = "(2 * rows * n + n) * 4"
)toml";
}
} // namespace

TEST_SUITE("sweep") {

TEST_CASE("expressions have integer helpers and name a bad token by position") {
    const Scope s{{"rows", 8192}, {"BLOCK", 256}};
    CHECK(Expr("ceil_div(rows, 3)", s).eval(s) == 2731);
    CHECK(Expr("1024 % BLOCK == 0 && min(rows, 100) == 100", s).eval(s) == 1);
    CHECK(Expr("max(BLOCK, 512, 7)", s).eval_int(s) == 512);
    CHECK(Expr("floor(rows / 3) + ceil(rows / 3)", s).eval_int(s) == 5461);
    CHECK_THROWS_WITH_AS((void)Expr("rows / 3", s).eval_int(s),
                         doctest::Contains("not a whole number (`/` divides exactly: "
                                           "ceil_div(a, b) rounds up, floor(a / b) down)"),
                         ConfigError);
    CHECK_THROWS_WITH_AS((void)Expr("rows * 0.5 + 0.25", s).eval_int(s),
                         "error: 'rows * 0.5 + 0.25' = 4096.250000 is not a whole number",
                         ConfigError);
    try {
        Expr e("rows + bogus", s, "f.toml", 4, 10);
        FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
        CHECK(e.line == 4);
        CHECK(e.column == 17); // the string starts at column 10, bogus at position 7
        CHECK(e.message.find("bogus") != std::string::npos);
    }
}

TEST_CASE("expansion walks the product with the last parameter fastest and applies constraints") {
    test::TempDir dir;
    // A kernel with no registered contract: the file declares its launch inline.
    std::ofstream(dir.path() / "s.toml") << R"toml(kernel = "my_kernel"
constraints = ["A * B <= 2048"]
[shape]
rows = 4
[sweep]
A = { pow2 = [256, 1024] }
B = { min = 1, max = 3, step = 1 }
[launch]
entry = "rms_norm_f32"
grid = ["ceil_div(rows, 2)", 1, "B"]
block = "A"
smem = "A * 4"
[[args]]
name = "y"
type = "f32*"
count = "rows"
output = true
[check]
baseline = { A = 512, B = 2 }
)toml";
    const SweepSpec spec = SweepSpec::load(dir.path() / "s.toml");
    std::size_t rejected = 0;
    const auto v = expand(spec, &rejected);
    // A in {256, 512, 1024}, B in {1, 2, 3}: A*B <= 2048 keeps 3 + 3 + 2.
    REQUIRE(v.size() == 8);
    CHECK(rejected == 1);
    CHECK(v[0].label() == "A=256 B=1");
    CHECK(v[1].label() == "A=256 B=2");
    CHECK(v[7].label() == "A=1024 B=2");
    CHECK(v[4].baseline);
    CHECK(v[4].grid.str() == "(2,1,2)");
    CHECK(v[4].block.x == 512);
    CHECK(v[4].smem == 2048);
    CHECK(v[4].defines.at("A") == "512");
    CHECK(spec.inline_contract);
    CHECK(spec.contract.name == "my_kernel");
    CHECK(v[4].plan.entry() == "rms_norm_f32");
    CHECK(v[4].plan.buffers.at(0).count == 4);
}

TEST_CASE("a sweep of a contract takes the launch from it and sweeps its launch parameters") {
    test::TempDir dir;
    std::ofstream(dir.path() / "s.toml") << R"toml(kernel = "rms_norm"
dtype = "bf16"
constraints = ["ROWS_PER_LAUNCH <= rows"]
[shape]
rows = 100
n = 64
[sweep]
RMS_BLOCK = [128, 256]
[sweep_launch]
ROWS_PER_LAUNCH = [50, 100, 200]
[check]
baseline = { RMS_BLOCK = 256, ROWS_PER_LAUNCH = 100 }
)toml";
    const SweepSpec spec = SweepSpec::load(dir.path() / "s.toml");
    CHECK_FALSE(spec.inline_contract);
    CHECK(spec.kernel == "rms_norm");
    CHECK(spec.dtype == DType::bf16);
    std::size_t rejected = 0;
    const auto v = expand(spec, &rejected);
    REQUIRE(v.size() == 4);
    CHECK(rejected == 2);
    CHECK(v[0].label() == "RMS_BLOCK=128 ROWS_PER_LAUNCH=50");
    CHECK(v[0].grid.str() == "(50,1,1)");
    CHECK(v[0].block.str() == "(128,1,1)");
    CHECK(v[3].baseline);
    CHECK(v[3].plan.entry() == "rms_norm_bf16");
    CHECK(v[3].plan.bytes == (2.0 * 100 * 64 + 64) * 2);
    CHECK(v[3].defines.at("RMS_BLOCK") == "256");
    CHECK(v[3].launch.at("ROWS_PER_LAUNCH") == 100);
}

TEST_CASE("a sweep list takes values from the shape and kjit tune resolves them at each shape") {
    test::TempDir dir;
    std::ofstream(dir.path() / "s.toml") << R"toml(kernel = "rms_norm"
[shape]
rows = 1
n = 2048
[defines]
RMS_BLOCK = 256
[sweep]
RMS_N = [0, "n", 2048, "n / 2 + RMS_BLOCK"]
[check]
baseline = { RMS_N = 0 }
[bench]
graph = true
calls = 32
)toml";
    SweepSpec spec = SweepSpec::load(dir.path() / "s.toml");
    CHECK(spec.calls == 32);
    CHECK(spec.graph);
    // 2048 is written twice (once as "n"): measured once.
    CHECK(spec.params.at(0).list == std::vector<long long>{0, 2048, 1280});
    auto labels = [&] {
        std::vector<std::string> out;
        for (const auto& v : expand(spec))
            out.push_back(v.label());
        return out;
    };
    CHECK(labels() == std::vector<std::string>{"RMS_N=0", "RMS_N=2048", "RMS_N=1280"});
    spec.set_shape({{"rows", 32}, {"n", 7168}});
    CHECK(spec.params.at(0).list == std::vector<long long>{0, 7168, 2048, 3840});
    CHECK(labels() ==
          std::vector<std::string>{"RMS_N=0", "RMS_N=7168", "RMS_N=2048", "RMS_N=3840"});
    CHECK(expand(spec).front().plan.buffers.at(0).count == 32 * 7168);
    CHECK_THROWS_WITH_AS(spec.set_shape({{"rows", 32}}),
                         doctest::Contains("the shape has no 'n'"), ConfigError);

    // kjit tune resolves every shape before it measures or writes anything: an expression that
    // is no whole number, or a baseline the shape's values leave out, at the second shape.
    std::ofstream(dir.path() / "t.toml") << R"toml(kernel = "rms_norm"
[shape]
rows = 1
n = 2048
[sweep]
RMS_N = ["n / 512", "n"]
)toml";
    const Run frac =
        run_kjit_in(dir.path(), "tune rms_norm --sweep t.toml --table tuned.toml --shapes "
                                "'rows=1,n=2048;rows=1,n=1000'");
    INFO(frac.out);
    CHECK(frac.code == 2);
    CHECK(contains(frac.out, "t.toml:6:11: error: 'n / 512' = 1.953125 is not a whole number "
                             "(`/` divides exactly: ceil_div(a, b) rounds up, floor(a / b) "
                             "down) (at shape rows=1,n=1000)"));
    std::ofstream(dir.path() / "b.toml") << R"toml(kernel = "rms_norm"
[shape]
rows = 1
n = 2048
[sweep]
RMS_N = [0, "n"]
[check]
baseline = { RMS_N = 2048 }
)toml";
    const Run base =
        run_kjit_in(dir.path(), "tune rms_norm --sweep b.toml --table tuned.toml --shapes "
                                "'rows=1,n=2048;rows=1,n=4096'");
    INFO(base.out);
    CHECK(base.code == 2);
    CHECK(contains(base.out, "b.toml:6:1: error: the baseline's RMS_N = 2048 is not among RMS_N's "
                             "values at this shape (at shape rows=1,n=4096)"));
    CHECK_FALSE(std::filesystem::exists(dir.path() / "tuned.toml"));
}

TEST_CASE("a random search draws budget distinct valid variants from a space it never expands") {
    // 6 x 32 x 16 x 10^9 points: expanding it would not finish; drawing 200 takes milliseconds.
    const std::string head = R"toml(kernel = "rms_norm"
constraints = ["RMS_WIDTH % RMS_BLOCK == 0"]
[shape]
rows = 4096
n = 4096
[sweep]
RMS_BLOCK = { pow2 = [32, 1024] }
RMS_WIDTH = { min = 32, max = 1024, step = 32 }
RMS_CACHE = { min = 1, max = 16 }
[sweep_launch]
ROWS_PER_LAUNCH = { min = 1, max = 1000000000 }
)toml";
    const auto search = [&](const std::string& extra) {
        return expand(SweepSpec::parse(head + "[search]\nstrategy = \"random\"\n" + extra, "s.toml"));
    };
    const auto labels = [](const std::vector<SweepVariant>& v) {
        std::vector<std::string> out;
        for (const SweepVariant& x : v)
            out.push_back(x.label());
        return out;
    };
    const auto start = std::chrono::steady_clock::now();
    const std::vector<SweepVariant> a = search("budget = 200\nseed = 7\n");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    REQUIRE(a.size() == 200);
    std::vector<std::string> names = labels(a);
    std::sort(names.begin(), names.end());
    CHECK(std::unique(names.begin(), names.end()) == names.end()); // distinct
    for (const SweepVariant& v : a) // valid: the constraint holds for each
        CHECK(std::stoi(v.defines.at("RMS_WIDTH")) % std::stoi(v.defines.at("RMS_BLOCK")) == 0);
    CHECK(a.front().baseline);
    CHECK(labels(search("budget = 200\nseed = 7\n")) == labels(a)); // the same seed: the same
    CHECK(labels(search("budget = 200\nseed = 8\n")) != labels(a));

    // A named baseline is drawn first and counts toward the budget.
    const auto with_base = search("budget = 5\n[check]\nbaseline = { RMS_BLOCK = 256, RMS_WIDTH = "
                                  "1024, RMS_CACHE = 8, ROWS_PER_LAUNCH = 4096 }\n");
    REQUIRE(with_base.size() == 5);
    CHECK(with_base[0].baseline);
    CHECK(with_base[0].label() == "RMS_BLOCK=256 RMS_CACHE=8 RMS_WIDTH=1024 ROWS_PER_LAUNCH=4096");

    // A drawn baseline is one point: every swept parameter named.
    CHECK_THROWS_WITH_AS(search("budget = 5\n[check]\nbaseline = { RMS_BLOCK = 256 }\n"),
                         doctest::Contains("a random or local search draws its baseline as one "
                                           "point: the baseline names every swept parameter"),
                         ConfigError);
    // A range's index is computed, never walked: a value a billion steps in is found at once.
    SweepParam wide;
    wide.kind = SweepParam::Kind::range;
    wide.min = 1;
    wide.max = 1000000000;
    wide.step = 3;
    CHECK(wide.index_of(999999997) == 333333332);
    CHECK_FALSE(wide.index_of(999999998));
    SweepParam pow2;
    pow2.kind = SweepParam::Kind::pow2;
    pow2.min = 32;
    pow2.max = 1024;
    CHECK(pow2.index_of(256) == 3);
    CHECK_FALSE(pow2.index_of(48));
    CHECK_FALSE(pow2.index_of(2048));

    // A budget over the valid points evaluates each once: here the exhaustive set.
    const std::string small = R"toml(kernel = "rms_norm"
constraints = ["RMS_WIDTH % RMS_BLOCK == 0"]
[shape]
rows = 64
n = 256
[sweep]
RMS_BLOCK = [128, 256]
RMS_WIDTH = [128, 256, 384]
)toml";
    std::vector<std::string> all = labels(expand(SweepSpec::parse(small, "s.toml")));
    std::vector<std::string> drawn = labels(expand(
        SweepSpec::parse(small + "[search]\nstrategy = \"random\"\nbudget = 50\n", "s.toml")));
    std::sort(all.begin(), all.end());
    std::sort(drawn.begin(), drawn.end());
    CHECK(all.size() == 4);
    CHECK(drawn == all);

    CHECK_THROWS_WITH_AS(SweepSpec::parse(small + "[search]\nstrategy = \"annealing\"\n", "s.toml"),
                         doctest::Contains("s.toml:10:12: error: unknown strategy 'annealing' "
                                           "(known: exhaustive, random, local)"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(SweepSpec::parse(small + "[search]\nstrategy = \"random\"\n", "s.toml"),
                         doctest::Contains("s.toml:9:1: error: strategy = \"random\" needs 'budget'"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(SweepSpec::parse(small + "[search]\nbudget = 3\n", "s.toml"),
                         doctest::Contains("s.toml:10:10: error: an exhaustive search evaluates "
                                           "every point"),
                         ConfigError);
    // An exhaustive sweep of the large space is refused before anything is planned.
    CHECK_THROWS_WITH_AS(expand(SweepSpec::parse(head, "s.toml")),
                         doctest::Contains("more than the 10000 an exhaustive sweep evaluates"),
                         ConfigError);
}

TEST_CASE("a local search starts at the baseline and its dry run compiles the first neighbourhood") {
    const std::string text = R"toml(kernel = "rms_norm"
constraints = ["RMS_WIDTH % RMS_BLOCK == 0"]
[shape]
rows = 64
n = 4096
[sweep]
RMS_BLOCK = { pow2 = [32, 1024] }
RMS_WIDTH = [256, 512, 1024]
[check]
baseline = { RMS_BLOCK = 256, RMS_WIDTH = 512 }
[search]
strategy = "local"
budget = 4
seed = 3
)toml";
    const SweepSpec spec = SweepSpec::parse(text, "s.toml");
    CHECK(spec.strategy == SweepSpec::Strategy::local);
    SweepPoints points(spec);
    // RMS_BLOCK (6 values) x RMS_WIDTH (3 values), the last fastest: 256 x 512 is 3 * 3 + 1.
    const auto base = points.index_of({{"RMS_BLOCK", 256}, {"RMS_WIDTH", 512}});
    REQUIRE(base);
    CHECK(*base == 10);
    CHECK(points.neighbours(*base) == std::vector<std::uint64_t>{7, 9, 11, 13});
    CHECK(points.neighbours(0) == std::vector<std::uint64_t>{1, 3}); // a corner: two
    CHECK_FALSE(points.index_of({{"RMS_BLOCK", 100}, {"RMS_WIDTH", 512}}));
    CHECK(points.at(10)->label() == "RMS_BLOCK=256 RMS_WIDTH=512");
    CHECK_FALSE(points.at(12)); // RMS_BLOCK=512 RMS_WIDTH=256: the constraint drops it
    CHECK(points.rejected() == 1);
    // expand() gives the start; the dry run adds the valid neighbours, the budget allowing.
    const auto start = expand(spec);
    REQUIRE(start.size() == 1);
    CHECK(start[0].baseline);
    SweepOptions o;
    o.dry_run = true;
    o.sources = choose_sources(KJIT_SOURCE_DIR "/kernel_src", builtin_flags().resolve(), nullptr);
    const SweepResult r = run_sweep(spec, o);
    CHECK(r.rows.size() == 4); // the budget: the start and 3 of its 4 neighbours
    CHECK(r.rows[0].variant.baseline);
    CHECK(contains(r.search, "local: 4 evaluated of 18 points"));
    for (const SweepRow& row : r.rows)
        CHECK(row.error.empty());
}

TEST_CASE("a contract's precondition drops variants and is named when none is left") {
    test::TempDir dir;
    const auto write = [&](const std::string& ksplit) {
        std::ofstream(dir.path() / "d.toml") << "kernel = \"delta_rule\"\n[shape]\nb = 1\nh = 2\n"
                                                "dk = 96\ndv = 32\n[sweep]\nDR_KSPLIT = " +
                                                    ksplit + "\n";
        return SweepSpec::load(dir.path() / "d.toml");
    };
    std::size_t rejected = 0;
    const auto v = expand(write("[3, 4, 5]"), &rejected);
    REQUIRE(v.size() == 2);
    CHECK(rejected == 1);
    CHECK(v[1].block.str() == "(32,4,1)");
    CHECK_THROWS_WITH_AS(expand(write("[5, 7]")),
                         doctest::Contains("no variant satisfies the constraints (2 rejected; "
                                           "delta_rule: dk=96 must be a multiple of "
                                           "DR_KSPLIT=5 and at most DR_MAX_DK=128)"),
                         ConfigError);
}

TEST_CASE("every broken sweep fixture is reported at its file:line:col with exit 2") {
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"bad_baseline.toml", "11:14: error: baseline names 'RMS_BLOK', which is not swept"},
        {"bad_calls.toml", "9:9: error: 'calls' = 0 is out of range (1..10000)"},
        {"baseline_not_swept_value.toml",
         "11:26: error: the baseline's RMS_BLOCK = 100 is not among RMS_BLOCK's values (64, 128)"},
        {"bad_expression.toml", "23:17: error: bad expression 'rows * * n': Unexpected operator "
                                "\"*\" found at position 7"},
        {"bytes_restated.toml", "11:9: error: 'bytes' comes from the contract of rms_norm: a sweep "
                                "file does not restate it"},
        {"define_never_read.toml",
         "9:1: error: define RMS_BLOK is never read by kernel_src/rms_norm.cu or the files it "
         "includes; did you mean RMS_BLOCK?"},
        {"empty_range.toml", "8:13: error: sweep parameter 'RMS_BLOCK' has no values"},
        {"inline_with_contract.toml",
         "10:1: error: kernel rms_norm has a contract (launch, arguments, bytes): a sweep of it "
         "states only its space, constraints, check and bench settings"},
        {"no_output.toml", "1:1: error: no argument is marked 'output = true': nothing to check"},
        {"not_a_launch_parameter.toml",
         "11:1: error: 'GRID' is not a launch parameter of rms_norm (known: ROWS_PER_LAUNCH)"},
        {"pow2_bound.toml", "8:23: error: 'pow2' starts at a power of two: 33 is not (32 or 64?)"},
        {"not_a_shape_key.toml",
         "5:1: error: 'm' is not a shape key of rms_norm (shape keys: rows, n)"},
        {"shape_value_fraction.toml", "7:14: error: 'n / 3' = 682.666667 is not a whole number"},
        {"shape_value_names_param.toml",
         "8:14: error: bad expression 'RMS_BLOCK * 8': unknown name 'RMS_BLOCK' (it may name: "
         "RMS_WARP_ROWS, dtype_size, n, rows) (a [sweep] list's expressions read the shape and the "
         "fixed defines)"},
        {"syntax.toml", "2:7: error: Error while parsing table header: expected ']'"},
        {"unknown_contract.toml",
         "1:10: error: no contract for kernel 'rms_nrom' (known: rms_norm, conv1d, conv1d_update, "
         "conv1d_cl, delta_rule); a kernel without one declares its launch inline: [launch] and "
         "[[args]]"},
        {"unknown_kernel.toml",
         "1:10: error: unknown kernel 'rms_nrom' (known kernels: conv1d, delta_rule, rms_norm); "
         "did you mean rms_norm?"},
        {"unknown_key.toml",
         "7:2: error: unknown key 'swep' in the sweep file; did you mean 'sweep'?"},
        {"unknown_name.toml",
         "12:9: error: bad expression 'rowz': unknown name 'rowz'; did you mean rows?"},
        {"unknown_reference.toml",
         "12:13: error: no float64 reference is registered as 'rms_nrom' (known: conv1d, "
         "conv1d_cl, conv1d_update, delta_rule, rms_norm)"},
        {"unknown_type.toml",
         "22:8: error: unknown type 'f16*' (known: buffers f32*, bf16*, dtype* "
         "(the case's dtype); scalars i32, u32, i64, u64, f32, f64)"},
        {"wrong_type.toml", "4:8: error: 'rows' must be an integer"},
    };
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(kFixtures))
        files += e.path().extension() == ".toml" ? 1 : 0;
    CHECK(files == expected.size());
    for (const auto& [file, message] : expected) {
        const Run r = run_kjit_in(KJIT_SOURCE_DIR, "sweep --dry-run " + kFixtures + file);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(r.out.find(kFixtures + file + ":" + message) != std::string::npos);
    }
}

TEST_CASE("a dry run of every shipped sweep file compiles every variant") {
    // kernel_src's sweeps and the tuning sweeps the table's entries name (bench/tune).
    std::vector<std::filesystem::path> files;
    for (const char* dir : {KJIT_SOURCE_DIR "/kernel_src", KJIT_SOURCE_DIR "/bench/tune"}) {
        const std::size_t before = files.size();
        for (const auto& e : std::filesystem::directory_iterator(dir))
            if (e.path().filename().string().ends_with(".sweep.toml"))
                files.push_back(e.path());
        CHECK_MESSAGE(files.size() > before, dir);
    }
    for (const auto& path : files) {
        const Run r = run_kjit_in(KJIT_SOURCE_DIR, "sweep --dry-run " + path.string());
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(r.out.find(", 0 failed to compile") != std::string::npos);
        // A contract whose entry points live in another's file is named with that file.
        if (path.filename() == "conv1d_update.sweep.toml")
            CHECK(contains(r.out, ": kernel conv1d_update (conv1d.cu), 6 variants"));
    }
}

TEST_CASE("an inline contract sweeps a kernel that has none registered") {
    test::TempDir dir;
    write_user_tree(dir.path());
    const std::string env = "KJIT_KERNEL_DIR=" + (dir.path() / "kernels").string();
    const Run r = run_kjit("sweep --dry-run " + (dir.path() / "inline.toml").string(), env);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kernel my_rms_norm, 3 variants"));
    CHECK(contains(r.out, ", 0 failed to compile"));
    const SweepSpec spec = SweepSpec::load(dir.path() / "inline.toml");
    CHECK(spec.inline_contract);
    CHECK(spec.reference == "rms_norm");
    const auto v = expand(spec);
    CHECK(v[0].plan.bytes == (2.0 * 64 * 1000 + 1000) * 4);
    CHECK(v[0].plan.scalars.at(2).value == static_cast<double>(1e-6f));
}

TEST_CASE("an inline contract's mistakes are reported at their file:line:col") {
    test::TempDir dir;
    write_user_tree(dir.path());
    const auto path = dir.path() / "inline.toml";
    std::string good;
    {
        std::ifstream in(path);
        good.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto fails = [&](const std::string& from, const std::string& to,
                           const std::string& message) {
        std::string text = good;
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
        std::ofstream(path, std::ios::trunc) << text;
        CHECK_THROWS_WITH_AS(SweepSpec::load(path), (path.string() + ":" + message).c_str(),
                             ConfigError);
    };
    fails("output = true", "outptu = true",
          "25:1: error: unknown key 'outptu' in [[args]]; did you mean 'output'?");
    fails("grid = \"rows\"", "grid = []", "11:8: error: 'grid' takes 1 to 3 expressions");
    fails("count = \"n\"", "count = \"n * * 2\"",
          "20:14: error: bad expression 'n * * 2': Unexpected operator \"*\" found at position 4");
    fails("entry = \"rms_norm_f32\"", "entry = \"rms_norm_f32\"\nthreads = 1",
          "11:1: error: unknown key 'threads' in [launch] (known: entry, grid, block, smem)");
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("an rms_norm sweep runs and checks and ranks and a warm re-run comes from the results cache") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    const std::string file = KJIT_SOURCE_DIR "/kernel_src/rms_norm.sweep.toml";
    const std::string out = (dir.path() / "out").string();
    const auto t0 = std::chrono::steady_clock::now();
    const Run first = run_kjit_in(KJIT_SOURCE_DIR, "sweep " + file + " --no-cache --out " + out);
    const auto t1 = std::chrono::steady_clock::now();
    INFO(first.out);
    CHECK(first.code == 0);
    CHECK(first.out.find("DIFFERS") == std::string::npos);
    CHECK(first.out.find("IDENTICAL") != std::string::npos);
    for (const char* f : {"sweep.csv", "sweep.json", "sweep.svg"})
        CHECK(std::filesystem::file_size(dir.path() / "out" / f) > 100);
    // Fill the results cache, then time a warm re-run against it.
    const auto t2 = std::chrono::steady_clock::now();
    const Run fill = run_kjit_in(KJIT_SOURCE_DIR, "sweep " + file + " --out " + out);
    const auto t3 = std::chrono::steady_clock::now();
    const Run warm = run_kjit_in(KJIT_SOURCE_DIR, "sweep " + file + " --out " + out);
    const auto t4 = std::chrono::steady_clock::now();
    CHECK(fill.code == 0);
    CHECK(warm.code == 0);
    CHECK(warm.out.find("(cached)") != std::string::npos);
    const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    MESSAGE("cold " << ms(t0, t1) << " ms, fill " << ms(t2, t3) << " ms, warm " << ms(t3, t4) << " ms");
}

TEST_CASE("an inline sweep checks a user's kernel against a float64 reference by name") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    write_user_tree(dir.path());
    const Run r = run_kjit("sweep --no-cache " + (dir.path() / "inline.toml").string() +
                               " --out " + (dir.path() / "out").string(),
                           "KJIT_KERNEL_DIR=" + (dir.path() / "kernels").string());
    INFO(r.out);
    CHECK(r.code == 0);
    std::size_t within = 0;
    for (std::size_t p = 0; (p = r.out.find("within tolerance", p)) != std::string::npos; ++p)
        ++within;
    CHECK(within == 3);
}

TEST_CASE("a tolerance sweep compares every variant with the float64 reference") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    std::ofstream(dir.path() / "tol.toml") << R"toml(kernel = "rms_norm"
[shape]
rows = 64
n = 1000
[defines]
RMS_BLOCK = 128
[sweep]
RMS_WIDTH = [256, 512, 1024]
[check]
mode = "tolerance"
rtol = 1e-6
)toml";
    const Run r = run_kjit_in(KJIT_SOURCE_DIR, "sweep --no-cache " + (dir.path() / "tol.toml").string() + " --out " +
                           (dir.path() / "out").string());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("OUT OF TOLERANCE") == std::string::npos);
    std::size_t within = 0;
    for (std::size_t p = 0; (p = r.out.find("within tolerance", p)) != std::string::npos; ++p)
        ++within;
    CHECK(within == 3);
}

} // TEST_SUITE
