// "Adding a kernel is one .cu and one contract": tests/fixtures/contract holds axpy.cu and its
// contract; a second kjit (tests/CMakeLists.txt: the same main.cpp and verbs, plus the fixture
// directory embedded and the contract linked) picks the kernel up in check, bench, digest and
// sweep with no list edited, while kjit itself does not know it.
#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <filesystem>
#include <fstream>

using namespace kjit;

namespace {
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit;
namespace fs = std::filesystem;

const std::string kFixtureDir = KJIT_SOURCE_DIR "/tests/fixtures/contract";
const std::string kNoDriver = "KJIT_DRIVER_LIBRARY=/nonexistent/libcuda.so.1";

/// Runs the kjit that links the fixture kernel and contract, from the temporary directory:
/// inside kjit's own project its kjit.toml would take precedence over the embedded copies.
Run run_fixture_kjit(const std::string& args, const std::string& env = {}) {
    return test::run_shell("cd " + fs::temp_directory_path().string() + " && " + env +
                           (env.empty() ? "" : " ") + KJIT_FIXTURE_BINARY + " " + args);
}

/// A kernel tree holding kjit's own kernels and the fixture kernel, for `check --src`.
void write_tree(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(KJIT_SOURCE_DIR "/kernel_src"))
        fs::copy_file(e.path(), dir / e.path().filename());
    fs::copy_file(kFixtureDir + "/axpy.cu", dir / "axpy.cu");
}

} // namespace

TEST_SUITE("fixture") {

TEST_CASE("the fixture kjit knows the fixture contract and kjit does not") {
    Run r = run_fixture_kjit("bench no_such_kernel");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "no bench or digest case for kernel 'no_such_kernel' (known: rms_norm, "
                          "conv1d, conv1d_update, conv1d_cl, delta_rule, axpy)"));
    r = run_kjit("bench axpy");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "no bench or digest case for kernel 'axpy' (known: rms_norm, conv1d, "
                          "conv1d_update, conv1d_cl, delta_rule)"));
    // The shape keys come from the contract, before any device is touched.
    r = run_fixture_kjit("bench axpy --shape m=5");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "bad shape 'm=5': axpy has no shape key 'm' (expected n=N)"));
    r = run_fixture_kjit("digest record axpy --shapes 'n=8;rows=2'");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "bad shape 'rows=2': axpy has no shape key 'rows' (expected n=N)"));
}

TEST_CASE("kjit digest record and kjit bench take the fixture kernel and need a device") {
    test::TempDir dir;
    Run r = run_fixture_kjit("digest record axpy --file " + (dir.path() / "axpy.toml").string(),
                             kNoDriver);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "kjit: error: no CUDA driver: cannot load /nonexistent/libcuda.so.1"));
    CHECK_FALSE(fs::exists(dir.path() / "axpy.toml"));
    r = run_fixture_kjit("bench axpy --shape n=4096", kNoDriver);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "kjit: error: no CUDA driver: cannot load /nonexistent/libcuda.so.1"));
}

TEST_CASE("kjit check compiles the fixture kernel and says why nothing was launched") {
    test::TempDir dir;
    write_tree(dir.path());
    const Run r = run_fixture_kjit("check --src " + dir.path().string(), kNoDriver);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit audit: 4 kernel(s) from " + dir.path().string()));
    CHECK(contains(r.out, "  ok    axpy "));
    CHECK(contains(r.out, "launches skipped: no CUDA driver"));
}

TEST_CASE("kjit sweep --dry-run compiles every variant of the fixture kernel's sweep") {
    const std::string file = kFixtureDir + "/axpy.sweep.toml";
    Run r = run_fixture_kjit("sweep --dry-run " + file + " --src " + kFixtureDir);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kernel axpy, 6 variants (0 rejected by the constraints)"));
    CHECK(contains(r.out, "AXPY_BLOCK=256 AXPY_ITEMS=4 *    (977,1,1)      (256,1,1)"));
    CHECK(contains(r.out, "sweep plan: 6 variants, 0 failed to compile"));
    r = run_kjit("sweep --dry-run " + file + " --src " + kFixtureDir);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "no contract for kernel 'axpy' (known: rms_norm, conv1d, "
                          "conv1d_update, conv1d_cl, delta_rule)"));
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("kjit check launches the fixture kernel's check cases against its reference") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    write_tree(dir.path());
    const Run r = run_fixture_kjit("check --src " + dir.path().string());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "axpy_f32/y"));
    CHECK(contains(r.out, "n=1000003"));
    CHECK(contains(r.out, "check: 0 failed"));
}

TEST_CASE("kjit digest record then check of the fixture kernel is IDENTICAL") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    const std::string file = (dir.path() / "axpy.toml").string();
    Run r = run_fixture_kjit("digest record axpy --file " + file);
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "digest record: wrote 2 case(s)"));
    r = run_fixture_kjit("digest check axpy --file " + file + " -D AXPY_ITEMS=1 -D AXPY_BLOCK=128");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "digest check: 2 identical, 0 differ"));
}

TEST_CASE("kjit bench times the fixture kernel with its contract's bytes") {
    KJIT_REQUIRE_DEVICE();
    const Run r = run_fixture_kjit("bench axpy --reps 3 --warmup 1");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit bench axpy n=16777216 f32"));
    CHECK(contains(r.out, "launch: axpy_f32"));
    CHECK(contains(r.out, "201.3 MB moved")); // 3 * n * 4 bytes
}

TEST_CASE("a sweep of the fixture kernel runs every variant and all are IDENTICAL") {
    KJIT_REQUIRE_DEVICE();
    test::TempDir dir;
    const Run r = run_fixture_kjit("sweep --no-cache --src " + kFixtureDir + " " + kFixtureDir +
                                   "/axpy.sweep.toml --out " +
                                   (dir.path() / "out").string());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_FALSE(contains(r.out, "DIFFERS"));
    CHECK(contains(r.out, "sweep: 6 variants, 0 failed their check or failed"));
}

} // TEST_SUITE
