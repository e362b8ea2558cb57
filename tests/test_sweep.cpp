#include "tests/support.hpp"
#include "tuning/sweep_runner.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <fstream>

using namespace kjit;

namespace {
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit;
const std::string kFixtures = KJIT_SOURCE_DIR "/tests/fixtures/sweep/";
} // namespace

TEST_SUITE("sweep") {

TEST_CASE("expressions have integer helpers and name a bad token by position") {
    const Scope s{{"rows", 8192}, {"BLOCK", 256}};
    CHECK(Expr("ceil_div(rows, 3)", s).eval(s) == 2731);
    CHECK(Expr("1024 % BLOCK == 0 && min(rows, 100) == 100", s).eval(s) == 1);
    CHECK(Expr("max(BLOCK, 512, 7)", s).eval_int(s) == 512);
    CHECK_THROWS_WITH_AS((void)Expr("rows / 3", s).eval_int(s), doctest::Contains("not a whole number"),
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
    std::ofstream(dir.path() / "s.toml") << R"toml(kernel = "rms_norm"
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
}

TEST_CASE("every broken sweep fixture is reported at its file:line:col with exit 2") {
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"bad_baseline.toml", "27:14: error: baseline names 'RMS_BLOK', which is not swept"},
        {"bad_expression.toml", "23:17: error: bad expression 'rows * * n': Unexpected operator \"*\" found at position 7"},
        {"define_never_read.toml", "9:1: error: define RMS_BLOK is never read by kernel_src/rms_norm.cu; did you mean RMS_BLOCK?"},
        {"empty_range.toml", "8:13: error: sweep parameter 'RMS_BLOCK' has no values"},
        {"no_output.toml", "1:1: error: no argument is marked 'output = true': nothing to check"},
        {"syntax.toml", "2:7: error: Error while parsing table header: expected ']'"},
        {"unknown_kernel.toml", "1:10: error: unknown kernel 'rms_nrom' (known kernels: conv1d, delta_rule, rms_norm)"},
        {"unknown_key.toml", "7:2: error: unknown key 'swep' in the sweep file"},
        {"unknown_name.toml", "12:9: error: bad expression 'rowz': Unexpected token \"rowz\" found at position 0."},
        {"unknown_type.toml", "22:8: error: unknown type 'f16*' (known: f32*, bf16*, i32, f32)"},
        {"wrong_type.toml", "4:8: error: 'rows' must be an integer"},
    };
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(kFixtures))
        files += e.path().extension() == ".toml" ? 1 : 0;
    CHECK(files == expected.size());
    for (const auto& [file, message] : expected) {
        const Run r = run_kjit("sweep --dry-run " + kFixtures + file);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(r.out.find(kFixtures + file + ":" + message) != std::string::npos);
    }
}

TEST_CASE("a dry run of every shipped sweep file compiles every variant") {
    for (const auto& e : std::filesystem::directory_iterator(KJIT_SOURCE_DIR "/kernel_src")) {
        if (!e.path().filename().string().ends_with(".sweep.toml"))
            continue;
        const Run r = run_kjit("sweep --dry-run " + e.path().string());
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(r.out.find(", 0 failed to compile") != std::string::npos);
    }
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("an rms_norm sweep runs and checks and ranks and a warm re-run comes from the results cache") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    const std::string file = KJIT_SOURCE_DIR "/kernel_src/rms_norm.sweep.toml";
    const std::string out = (dir.path() / "out").string();
    const auto t0 = std::chrono::steady_clock::now();
    const Run first = run_kjit("sweep " + file + " --no-cache --out " + out);
    const auto t1 = std::chrono::steady_clock::now();
    INFO(first.out);
    CHECK(first.code == 0);
    CHECK(first.out.find("DIFFERS") == std::string::npos);
    CHECK(first.out.find("IDENTICAL") != std::string::npos);
    for (const char* f : {"sweep.csv", "sweep.json", "sweep.svg"})
        CHECK(std::filesystem::file_size(dir.path() / "out" / f) > 100);
    // Fill the results cache, then time a warm re-run against it.
    const auto t2 = std::chrono::steady_clock::now();
    const Run fill = run_kjit("sweep " + file + " --out " + out);
    const auto t3 = std::chrono::steady_clock::now();
    const Run warm = run_kjit("sweep " + file + " --out " + out);
    const auto t4 = std::chrono::steady_clock::now();
    CHECK(fill.code == 0);
    CHECK(warm.code == 0);
    CHECK(warm.out.find("(cached)") != std::string::npos);
    const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    MESSAGE("cold " << ms(t0, t1) << " ms, fill " << ms(t2, t3) << " ms, warm " << ms(t3, t4) << " ms");
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
)toml";
    const Run r = run_kjit("sweep --no-cache " + (dir.path() / "tol.toml").string() + " --out " +
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
