// Nonsense input is refused with a clear error (exit 2 from the CLI, a ConfigError from the
// library), at file:line:col where there is a file; nothing hangs, loops or allocates for it.
// Each test here is a row of docs/bad-input.md.
#include "jit/cache_entry.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "runtime/ledger.hpp"
#include "tests/support.hpp"
#include "tuning/sweep_plan.hpp"
#include "tuning/sweep_spec.hpp"

#include "tests/doctest.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

using namespace kjit;
using kjit::test::contains;
using kjit::test::write_file;
using kjit::test::Run;
using kjit::test::run_kjit;
namespace fs = std::filesystem;

namespace {

const std::string kKernel = "extern \"C\" __global__ void k(int* y) { y[0] = 1; }\n";

/// `kjit ARGS` with the disk cache off and no driver: what a user without a GPU sees.
Run run_plain(const std::string& args) {
    return run_kjit(args, "KJIT_NO_CACHE=1 KJIT_DRIVER_LIBRARY=/nonexistent");
}

/// A sweep file of a kernel with an inline contract: `[sweep]` and `[launch]` as given, one
/// output buffer of `count` elements.
std::string inline_sweep(const std::string& sweep, const std::string& launch,
                         const std::string& extra = {}, const std::string& count = "n") {
    return "kernel = \"my_kernel\"\n" + extra + "[shape]\nn = 1000\n[sweep]\n" + sweep +
           "\n[launch]\nentry = \"k\"\n" + launch + "\n[[args]]\nname = \"y\"\ntype = \"f32*\"\n" +
           "count = \"" + count + "\"\noutput = true\n";
}

/// The ConfigError text of expanding the sweep file `text` (written to dir/s.toml).
std::string expand_error(const fs::path& dir, const std::string& text,
                         std::optional<std::uint64_t> cap = std::nullopt) {
    write_file(dir / "s.toml", text);
    try {
        (void)expand(SweepSpec::load(dir / "s.toml"), nullptr, cap);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST_SUITE("bad-input") {

    TEST_CASE(
        "an architecture that is virtual or malformed or unknown to NVRTC is refused with exit 2") {
        test::TempDir dir;
        write_file(dir.path() / "k.cu", kKernel);
        const std::string src =
            " --src " + dir.path().string() + " -o " + (dir.path() / "k.cubin").string();
        Run r = run_plain("compile k --arch compute_90" + src);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "architecture 'compute_90' is virtual: it has no machine code, and "
                              "NVRTC returns an empty CUBIN for it; name a real one (sm_90)"));
        CHECK(!fs::exists(dir.path() / "k.cubin"));
        r = run_plain("compile k --arch banana" + src);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "bad architecture 'banana': expected sm_NN (sm_90, sm_90a)"));
        r = run_plain("compile k --arch sm_999" + src);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "unknown architecture 'sm_999' (NVRTC "));
        CHECK(contains(r.out, " compiles for: "));
        CHECK(contains(r.out, "sm_90"));
        r = run_plain("compile k --arch sm_90a" + src);
        CHECK(r.code == 0);
        CHECK(fs::file_size(dir.path() / "k.cubin") > 0);
        // The engine refuses a bad arch once, before any kernel is prepared.
        write_file(dir.path() / "shape.toml", "[[kernel]]\nname = \"rms_norm\"\n");
        r = run_plain("specialize " + (dir.path() / "shape.toml").string() + " --arch compute_90");
        CHECK(r.code == 2);
        CHECK(contains(r.out, "architecture 'compute_90' is virtual"));
        CHECK(!contains(r.out, "specialize: "));
        // The library says the same.
        CompileOptions o;
        o.arch = "compute_90";
        CHECK_THROWS_AS(check_options(o), ConfigError);
        for (const char* bad : {"sm_", "sm_90b", "sm_90aa", "90", "SM_90", ""}) {
            o.arch = bad;
            CHECK_THROWS_WITH_AS(o.check(), doctest::Contains("bad architecture"), ConfigError);
        }
        for (const char* good : {"sm_90", "sm_90a", "sm_100f"}) {
            o.arch = good;
            CHECK_NOTHROW(o.check());
        }
    }

    TEST_CASE("an empty CUBIN is neither stored nor served") {
        const Hash128 key = hash128("empty cubin");
        const std::string bytes = encode_entry({key, "kernel=k\n", ""});
        std::string problem;
        CHECK(!decode_entry(bytes, key, &problem));
        CHECK(problem == "empty CUBIN");
        test::TempDir dir;
        ::chmod(dir.path().c_str(), 0700);
        DiskCache cache(dir.path());
        CHECK(!cache.store({key, "kernel=k\n", ""}));
        CHECK(!cache.load(key));
        CHECK(fs::is_empty(dir.path()));
    }

    TEST_CASE("an empty or blank kernel source is refused and not compiled") {
        test::TempDir dir;
        for (const char* text : {"", " \n\t\n"}) {
            write_file(dir.path() / "k.cu", text);
            const Run r = run_plain("compile k --src " + dir.path().string());
            INFO(r.out);
            CHECK(r.code == 2);
            CHECK(contains(r.out,
                           (dir.path() / "k.cu").string() +
                               ": error: the kernel source is empty: there is nothing to compile"));
        }
    }

    TEST_CASE("kjit specialize refuses a directory and an empty file and a FIFO and /dev/zero") {
        test::TempDir dir;
        const auto run = [](const std::string& path) {
            const Run r = run_plain("specialize " + path);
            INFO(r.out);
            CHECK(r.code == 2);
            CHECK(!contains(r.out, "0 kernel(s)"));
            return r.out;
        };
        CHECK(contains(run(dir.path().string()),
                       dir.path().string() + ": error: cannot read shape file: Is a directory"));
        write_file(dir.path() / "empty.toml", "");
        CHECK(contains(run((dir.path() / "empty.toml").string()),
                       "empty.toml:1:1: error: the shape file declares no [[kernel]]: there is "
                       "nothing to prepare"));
        write_file(dir.path() / "shape_only.toml", "[shape]\nd_model = 64\n");
        CHECK(contains(run((dir.path() / "shape_only.toml").string()), "declares no [[kernel]]"));
        const fs::path fifo = dir.path() / "fifo.toml";
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        CHECK(
            contains(run(fifo.string()),
                     "fifo.toml: error: cannot read shape file: it is a FIFO, not a regular file"));
        CHECK(contains(run("/dev/zero"), "/dev/zero: error: cannot read shape file: it is a "
                                         "character device, not a regular file"));
    }

    TEST_CASE("an input file over 64 MiB is refused without being read") {
        test::TempDir dir;
        const fs::path big = dir.path() / "big.sweep.toml";
        write_file(big, "kernel = \"rms_norm\"\n");
        fs::resize_file(big, (64u << 20) + 1); // sparse: nothing is written
        const Run r = run_plain("sweep --dry-run " + big.string());
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, big.string() +
                                  ": error: cannot read sweep file: it is 67108865 bytes, "
                                  "more than the 64 MiB kjit reads from one file"));
        CHECK_THROWS_WITH_AS(ShapeFile::load(big), doctest::Contains("more than the 64 MiB"),
                             ConfigError);
    }

    TEST_CASE("a sweep file or a flags file that is a directory or a device is refused") {
        test::TempDir dir;
        Run r = run_plain("sweep --dry-run " + dir.path().string());
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "cannot read sweep file: Is a directory"));
        r = run_plain("sweep --dry-run /dev/zero");
        CHECK(r.code == 2);
        CHECK(
            contains(r.out, "/dev/zero: error: cannot read sweep file: it is a character device"));
        r = run_plain("env --flags /dev/zero");
        CHECK(r.code == 2);
        CHECK(
            contains(r.out, "/dev/zero: error: cannot read flags file: it is a character device"));
    }

    TEST_CASE("a kernel declared twice in a shape file is refused at the second name") {
        test::TempDir dir;
        const fs::path shape = dir.path() / "twice.toml";
        write_file(shape, "[[kernel]]\nname = \"rms_norm\"\n\n[[kernel]]\nname = \"rms_norm\"\n");
        const Run r = run_plain("specialize " + shape.string());
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, shape.string() +
                                  ":5:8: error: kernel 'rms_norm' is declared twice "
                                  "(first at line 2): an application asks for a kernel "
                                  "by its name"));
    }

    TEST_CASE("a define with a NUL or a line break or an open operator or a name that is not an "
              "identifier is refused") {
        Defines d;
        CHECK_THROWS_WITH_AS(add_define(d, std::string("X=a\0b", 5)),
                             "error: bad define 'X': the value contains a NUL character",
                             ConfigError);
        CHECK_THROWS_WITH_AS(add_define(d, "X=a\nb"),
                             "error: bad define 'X': the value contains a line break", ConfigError);
        // An operator outside parentheses changes meaning inside the source's expressions.
        CHECK_THROWS_WITH_AS(add_define(d, "B=64+64"),
                             "error: bad define 'B': the value '64+64' is an expression with '+' "
                             "outside parentheses: a define expands as text, so the source's own "
                             "B / 2 would read '64+64 / 2'; write B=(64+64)",
                             ConfigError);
        for (const char* fine :
             {"B=(64+64)", "B=-1", "B=float*", "B=1.0f", "B=a::b<2>", "B=float* __restrict__",
              "B=const float* const", "B=(unsigned)-1", "B=1e-5"})
            CHECK_NOTHROW(add_define(d, fine));
        // Options built in code, bypassing add_define, are checked before a compile or a key.
        CompileOptions o;
        o.defines["A B"] = "1";
        CHECK_THROWS_WITH_AS(
            o.check(), "error: bad define 'A B=1': expected NAME=VALUE with NAME a C identifier",
            ConfigError);
        o.defines = {{"X", std::string("1\0", 2)}};
        CHECK_THROWS_WITH_AS(o.check(), "error: bad define 'X': the value contains a NUL character",
                             ConfigError);
        test::TempDir dir;
        write_file(dir.path() / "k.cu", kKernel);
        SourceSet set = SourceSet::from_directory(dir.path());
        CHECK_THROWS_AS((void)make_cache_key(set, "k", o), ConfigError);
        CHECK_THROWS_AS((void)compile(set, "k", o), ConfigError);
        // In a shape file, at the define.
        const fs::path shape = dir.path() / "nul.toml";
        write_file(shape,
                   "[[kernel]]\nname = \"rms_norm\"\ndefines = { RMS_BLOCK = \"2\\u00005\" }\n");
        const Run r = run_plain("specialize " + shape.string());
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, shape.string() + ":3:"));
        CHECK(contains(r.out, "the value contains a NUL character"));
    }

    TEST_CASE(
        "shared memory and launch dimensions out of range are refused at their file:line:col") {
        test::TempDir dir;
        const std::string f = (dir.path() / "s.toml").string();
        CHECK(expand_error(dir.path(),
                           inline_sweep("B = [64]", "grid = 1\nblock = \"B\"\nsmem = \"-1\"")) ==
              f + ":10:9: error: variant B=64: my_kernel: step 1: smem '-1' = -1 is out of range "
                  "(0..2147483647 "
                  "bytes)");
        CHECK(contains(expand_error(dir.path(), inline_sweep("B = [64]", "grid = 1\nblock = \"B\"\n"
                                                                         "smem = \"B * 2^40\"")),
                       f + ":10:9: error: variant B=64: my_kernel: step 1: smem 'B * 2^40' = "
                           "70368744177664 is out "
                           "of range"));
        CHECK(expand_error(dir.path(),
                           inline_sweep("B = [64]", "grid = [1, \"B * 1024\"]\nblock = \"B\"")) ==
              f + ":8:13: error: variant B=64: my_kernel: grid.y 'B * 1024' = 65536 is not a valid "
                  "launch "
                  "dimension "
                  "(1..65535)");
        CHECK(
            expand_error(dir.path(), inline_sweep("B = [64]", "grid = \"0 - B\"\nblock = \"B\"")) ==
            f + ":8:9: error: variant B=64: my_kernel: grid.x '0 - B' = -64 is not a valid launch "
                "dimension "
                "(1..2147483647)");
        CHECK(expand_error(dir.path(),
                           inline_sweep("B = [64]", "grid = 1\nblock = [\"B\", \"B\"]")) ==
              f + ":9:11: error: variant B=64: my_kernel: block (64,64,1) has 4096 threads; a "
                  "block has at most "
                  "1024");
    }

    TEST_CASE("a constraint or expression that divides by zero or is not finite is refused") {
        test::TempDir dir;
        const std::string f = (dir.path() / "s.toml").string();
        const std::string launch = "grid = 1\nblock = \"B\"";
        // x / 0 > 0 is a plain 1 to the parser: the division is seen all the same.
        CHECK(expand_error(dir.path(), inline_sweep("B = [0, 64]", launch,
                                                    "constraints = [\"n / B > 1\"]\n")) ==
              f + ":2:17: error: variant B=0: 'n / B > 1' divides by zero or takes an invalid "
                  "operation (B=0, "
                  "n=1000): its value 1 means nothing");
        CHECK(contains(
            expand_error(dir.path(),
                         inline_sweep("B = [64]", launch, "constraints = [\"sqrt(0 - B) < 1\"]\n")),
            f + ":2:17: error: variant B=64: 'sqrt(0 - B) < 1' divides by zero or takes an invalid "
                "operation (B=64)"));
        CHECK(contains(expand_error(dir.path(), inline_sweep("B = [64]", launch,
                                                             "constraints = [\"n / (B - 64)\"]\n")),
                       f + ":2:17: error: variant B=64: 'n / (B - 64)' = inf is not a finite "
                           "number (B=64, n=1000)"));
        CHECK(contains(expand_error(dir.path(), inline_sweep("B = [64]", launch, {}, "2^70")),
                       "' = 1180591620717411303424.000000 is out of range for a 64-bit integer"));
        CHECK(contains(expand_error(dir.path(), inline_sweep("B = [64]", launch, {}, "0 - n")),
                       "my_kernel: buffer y: count '0 - n' = -1000 is negative"));
        CHECK(contains(
            expand_error(dir.path(), inline_sweep("B = [64]", launch, {}, "2^62")),
            "my_kernel: buffer y: count '2^62' = 4611686018427387904 elements is more than "
            "a buffer can hold"));
        // The CLI says it with exit 2.
        const Run r = run_plain("sweep --dry-run " + f);
        INFO(r.out);
        CHECK(r.code == 2);
    }

    TEST_CASE("a baseline that a constraint or a precondition drops says which and where") {
        test::TempDir dir;
        const std::string f = (dir.path() / "s.toml").string();
        const std::string launch = "grid = 1\nblock = \"B\"";
        const std::string check = "[check]\nbaseline = { B = 128 }\n";
        CHECK(expand_error(dir.path(), inline_sweep("B = [64, 128]\n" + check, launch,
                                                    "constraints = [\"B < 100\"]\n")) ==
              f + ":8:12: error: the baseline variant (B=128) is not among the variants that "
                  "satisfy the constraints: constraint 'B < 100' (line 2) is false");
    }

    TEST_CASE("a huge range is refused at once by the variant cap and never expanded") {
        test::TempDir dir;
        const std::string launch = "grid = 1\nblock = 64";
        // Each of these once looped forever (overflow) or ran out of memory.
        const std::string f = (dir.path() / "s.toml").string();
        write_file(dir.path() / "s.toml",
                   inline_sweep("B = { pow2 = [32, 9223372036854775807] }", launch));
        CHECK(expand(SweepSpec::load(dir.path() / "s.toml")).size() == 58); // 2^5 .. 2^62
        CHECK(
            expand_error(dir.path(),
                         inline_sweep("B = { pow2 = [32, 9223372036854775807] }", launch), 16) ==
            f + ":5:1: error: the sweep's space has 58 points (B: 58 values), more than the 16 an "
                "exhaustive sweep evaluates (KJIT_SWEEP_MAX_VARIANTS): narrow the ranges, or raise "
                "the cap");
        CHECK(expand_error(
                  dir.path(),
                  inline_sweep("B = { min = -9223372036854775808, max = 9223372036854775807 }",
                               launch)) ==
              f + ":5:1: error: the sweep's space has more than 2^64 points (B: more than 2^64 "
                  "values), more than the 10000 an exhaustive sweep evaluates "
                  "(KJIT_SWEEP_MAX_VARIANTS): narrow the ranges, or raise the cap");
        CHECK(
            contains(expand_error(dir.path(), inline_sweep("A = { min = 1, max = 1000 }\n"
                                                           "B = { min = 1, max = 1000 }",
                                                           launch)),
                     "the sweep's space has 1000000 points (A: 1000 values x B: 1000 values), more "
                     "than the 10000"));
        const Run r = run_plain("sweep --dry-run " + f);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "1000000 points"));
    }

    TEST_CASE("a sweep space is sized and decoded without being expanded") {
        SweepParam range{"R",
                         true,
                         SweepParam::Kind::range,
                         {},
                         -9223372036854775807LL - 1,
                         9223372036854775807LL,
                         1};
        CHECK(range.size() == std::numeric_limits<std::uint64_t>::max());
        CHECK(range.value(0) == range.min);
        CHECK(range.value(std::numeric_limits<std::uint64_t>::max() - 1) == range.max - 1);
        SweepParam stepped{"S",
                           true,
                           SweepParam::Kind::range,
                           {},
                           1,
                           9223372036854775807LL,
                           4611686018427387904LL};
        CHECK(stepped.size() == 2);
        CHECK(stepped.value(1) == 4611686018427387905LL);
        SweepParam pow2{"P", true, SweepParam::Kind::pow2, {}, 3, 9223372036854775807LL, 1};
        CHECK(pow2.size() == 61);
        CHECK(pow2.value(0) == 4);
        CHECK(pow2.value(60) == 1LL << 62);
        SweepParam list{"L", true, SweepParam::Kind::list, {5, 7, 9}};
        const SweepSpace space({pow2, list});
        CHECK(space.size() == 183);
        CHECK(space.point(4) == std::map<std::string, long long>{{"L", 7}, {"P", 8}});
        CHECK(SweepSpace({range, list}).size() == std::nullopt);
        CHECK(SweepSpace({range, list}).describe() ==
              "more than 2^64 points (R: more than 2^64 values x L: 3 values)");
        CHECK_NOTHROW(space.check_cap(183));
        CHECK_THROWS_AS(space.check_cap(182), ConfigError);
    }

    TEST_CASE(
        "KJIT_SWEEP_MAX_VARIANTS caps an exhaustive sweep and is a declared flag with a range") {
        test::TempDir dir;
        const fs::path file = dir.path() / "s.toml";
        write_file(file, inline_sweep("A = [1, 2, 3]\nB = [1, 2]", "grid = \"A\"\nblock = \"B\""));
        Run r = run_kjit("sweep --dry-run " + file.string(), "KJIT_SWEEP_MAX_VARIANTS=5");
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out,
                       "the sweep's space has 6 points (A: 3 values x B: 2 values), more than "
                       "the 5 an exhaustive sweep evaluates (KJIT_SWEEP_MAX_VARIANTS)"));
        r = run_kjit("sweep --dry-run " + file.string(), "KJIT_SWEEP_MAX_VARIANTS=0");
        CHECK(r.code == 2);
        CHECK(contains(r.out,
                       "KJIT_SWEEP_MAX_VARIANTS=0 is out of range; accepted values: integers "
                       "1..1000000000"));
        CHECK(expand(SweepSpec::load(file), nullptr, 6).size() == 6);
    }

    TEST_CASE("a parameter swept twice or both fixed and swept is refused at its name") {
        test::TempDir dir;
        const std::string f = (dir.path() / "s.toml").string();
        CHECK(expand_error(dir.path(), inline_sweep("B = [64]", "grid = 1\nblock = \"B\"",
                                                    "[defines]\nB = 32\n")) ==
              f + ":7:1: error: 'B' is both a fixed define and a swept parameter");
        CHECK(expand_error(dir.path(), inline_sweep("B = [64]\n[sweep_launch]\nB = [32]",
                                                    "grid = 1\nblock = \"B\"")) ==
              f + ":7:1: error: 'B' is swept twice, under [sweep] and [sweep_launch]");
    }

    TEST_CASE("check and bench settings out of range are refused at their file:line:col") {
        test::TempDir dir;
        const std::string f = (dir.path() / "s.toml").string();
        const std::string launch = "grid = 1\nblock = \"B\"";
        CHECK(
            expand_error(dir.path(), inline_sweep("B = [64]", launch) + "[check]\nrtol = -1.0\n") ==
            f + ":16:8: error: 'rtol' must be a finite number, at least 0");
        CHECK(
            expand_error(dir.path(), inline_sweep("B = [64]", launch) + "[check]\nrtol = nan\n") ==
            f + ":16:8: error: 'rtol' must be a finite number, at least 0");
        CHECK(expand_error(dir.path(), inline_sweep("B = [64]", launch) + "[bench]\nreps = 0\n") ==
              f + ":16:8: error: 'reps' must be positive");
        CHECK(expand_error(dir.path(),
                           inline_sweep("B = [64]", launch) + "[bench]\nwarmup = 10000000000\n") ==
              f + ":16:10: error: 'warmup' = 10000000000 is out of range (0..1000000)");
        CHECK(expand_error(dir.path(),
                           inline_sweep("B = [64]", launch) + "[bench]\nreps = 4294967297\n") ==
              f + ":16:8: error: 'reps' = 4294967297 is out of range (1..1000000)");
    }

    TEST_CASE("an injected define #defined again under a condition it satisfies is refused") {
        // `#if !defined(TB) || TB < 1024` holds for TB=128: the file's 256 replaced the injected
        // value with only NVRTC's warning, and every verb passed.
        test::TempDir dir;
        write_file(dir.path() / "k.cu", "#if !defined(TB) || TB < 1024\n#define TB 256\n#endif\n"
                                        "extern \"C\" __global__ void __launch_bounds__(TB)\n"
                                        "k(float* y) { y[threadIdx.x] = TB; }\n");
        const std::string src = " --src " + dir.path().string();
        Run r = run_plain("compile --no-cache k -D TB=128" + src);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out, (dir.path() / "k.cu").string() +
                                  ":2:9: error: define TB=128 is #defined again here, under a "
                                  "condition that held for the injected value (NVRTC: "
                                  "incompatible redefinition of macro \"TB\"): the file's value "
                                  "replaces the injected one; put the file's default under "
                                  "#ifndef TB"));
        // The same value, or a value the condition leaves alone, is no redefinition.
        CHECK(run_plain("compile --no-cache k -D TB=256" + src).code == 0);
        CHECK(run_plain("compile --no-cache k -D TB=1024" + src).code == 0);
    }

    TEST_CASE("kjit compile -D of a define the kernel never reads is refused unless allowed") {
        test::TempDir dir;
        write_file(dir.path() / "k.cu", "#ifndef K_BLOCK\n#define K_BLOCK 256\n#endif\n"
                                        "constexpr int k_block = K_BLOCK;\n" +
                                            kKernel);
        const std::string src = " --src " + dir.path().string();
        Run r = run_plain("compile k -D K_BLOKC=128" + src);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "error: define K_BLOKC (-D) is never read by " +
                                  (dir.path() / "k.cu").string() +
                                  " or the files it includes; did you mean K_BLOCK?"));
        CHECK(contains(r.out, "KJIT_ALLOW_UNREAD_DEFINES=1"));
        CHECK(run_plain("compile k -D K_BLOCK=128" + src).code == 0);
        // Allowed (a define only a toolkit header reads): compiled, with a warning.
        r = run_kjit("compile k -D K_BLOKC=128" + src,
                     "KJIT_NO_CACHE=1 KJIT_DRIVER_LIBRARY=/nonexistent KJIT_ALLOW_UNREAD_DEFINES=1");
        CHECK(r.code == 0);
        CHECK(contains(r.out, "warning: define K_BLOKC (-D) is never read by"));
    }

    TEST_CASE("a symlink loop in --src is refused with exit 2 and a dangling link is skipped") {
        test::TempDir dir;
        write_file(dir.path() / "k.cu", kKernel);
        fs::create_symlink("missing.cuh", dir.path() / "dangling.cuh");
        Run r = run_plain("compile k --src " + dir.path().string());
        INFO(r.out);
        CHECK(r.code == 0);
        fs::create_symlink("loop_b.cuh", dir.path() / "loop_a.cuh");
        fs::create_symlink("loop_a.cuh", dir.path() / "loop_b.cuh");
        r = run_plain("compile k --src " + dir.path().string());
        CHECK(r.code == 2);
        // Whichever link of the loop the directory lists first.
        CHECK(contains(r.out, "kjit: " + (dir.path() / "loop_").string()));
        CHECK(contains(r.out, ".cuh: error: cannot read kernel source tree: Too many levels of "
                              "symbolic links"));
        fs::remove(dir.path() / "loop_a.cuh");
        fs::remove(dir.path() / "loop_b.cuh");
        // A link to a directory is not followed: a tree that links to itself lists once.
        fs::create_directory_symlink(".", dir.path() / "self");
        r = run_plain("compile k --src " + dir.path().string());
        CHECK(r.code == 0);
    }

    TEST_CASE("a FIFO or a device inside --src is never opened") {
        test::TempDir dir;
        write_file(dir.path() / "k.cu", kKernel);
        REQUIRE(::mkfifo((dir.path() / "pipe.cuh").c_str(), 0600) == 0);
        fs::create_symlink("/dev/zero", dir.path() / "zero.cuh");
        const Run r = run_plain("compile k --src " + dir.path().string());
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(SourceSet::from_directory(dir.path()).files().size() == 1);
    }

    TEST_CASE(
        "an unreadable subdirectory of --src is refused with exit 2 as an unprivileged user") {
        const auto as_user = test::unprivileged_prefix();
        if (!as_user)
            return test::skip("running as root without setpriv: file modes do not stop root");
        test::TempDir dir;
        ::chmod(dir.path().c_str(), 0755);
        write_file(dir.path() / "k.cu", kKernel);
        ::chmod((dir.path() / "k.cu").c_str(), 0644);
        fs::create_directory(dir.path() / "private");
        ::chmod((dir.path() / "private").c_str(), 0);
        const Run r =
            test::run_shell("KJIT_NO_CACHE=1 KJIT_DRIVER_LIBRARY=/nonexistent " + *as_user +
                            KJIT_BINARY + " compile k --src " + dir.path().string());
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, (dir.path() / "private").string() +
                                  ": error: cannot read kernel source tree: Permission denied"));
    }

    TEST_CASE("an include directory that is not a directory is refused") {
        test::TempDir dir;
        write_file(dir.path() / "k.cu", kKernel);
        const Run r =
            run_plain("compile k --src " + dir.path().string() + " -I /nonexistent/include");
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "/nonexistent/include: error: include directory does not exist or is "
                              "not a directory"));
    }

    TEST_CASE("a --src that does not exist is named the same way by every verb that reads it") {
        // sweep reads its sources through the provider that KJIT_KERNEL_DIR also sets: the
        // message names the directory, not a variable the user never set.
        const std::string sweep = KJIT_SOURCE_DIR "/kernel_src/rms_norm.sweep.toml";
        for (const std::string& args :
             {std::string("compile rms_norm"), std::string("audit"), std::string("lint"),
              std::string("sig"), std::string("check"), "sweep --dry-run " + sweep}) {
            const Run r = run_plain(args + " --src /nonexistent/kernels");
            INFO(args << "\n" << r.out);
            CHECK(r.code == 2);
            CHECK(contains(r.out, "/nonexistent/kernels: error: kernel source directory does not "
                                  "exist or is not a directory"));
        }
    }

    TEST_CASE("a sweep dry run refuses the options that write measured results") {
        const std::string sweep = KJIT_SOURCE_DIR "/kernel_src/rms_norm.sweep.toml";
        for (const auto& [option, why] :
             {std::pair<std::string, std::string>{"--out /tmp/x", "--out names where the "
                                                                  "measured results go"},
              {"--record /tmp/t.toml", "--record writes a measured winner"}}) {
            const Run r = run_plain("sweep --dry-run " + sweep + " " + option);
            INFO(r.out);
            CHECK(r.code == 2);
            CHECK(contains(r.out, why + std::string(": a dry run measures nothing")));
        }
    }

    TEST_CASE("a kernel that compiles to no entry point fails the compile and the audit") {
        // A comment-only file, and a kernel behind a false #if: NVRTC compiles both, to nothing.
        // The word "template" in a comment does not make the file one of templates.
        kjit::test::TempDir dir;
        write_file(dir.path() / "k/empty.cu", "// the kernel template is still to be written\n");
        write_file(dir.path() / "k/gone.cu", "#if 0\n" + kKernel + "#endif\n");
        const std::string src = " --src " + (dir.path() / "k").string();
        const std::string why = "error: the kernel source compiles to no entry point";
        Run r = run_plain("compile gone" + src);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out, "gone.cu: " + why));
        // With the disk cache on, twice: a record without an entry point is never served.
        for (int i = 0; i < 2; ++i) {
            r = kjit::test::run_kjit_in(dir.path(), "audit" + src,
                                        "KJIT_CACHE_DIR=" + (dir.path() / "cache").string() +
                                            " KJIT_DRIVER_LIBRARY=/nonexistent");
            CHECK(r.code == 1);
            CHECK(contains(r.out, "audit: 0 compiled, 2 failed"));
            CHECK(contains(r.out, "empty.cu: " + why));
        }
    }

    TEST_CASE(
        "a launch bound above 1024 threads fails the compile at its line and from the cache") {
        // TILE = 8 builds the kernel for blocks of 2048 threads: NVRTC and ptxas accept it, and
        // no launch could run it as built.
        kjit::test::TempDir dir;
        write_file(dir.path() / "k/saxpy.cu",
                   "#ifndef TILE\n#define TILE 4\n#endif\n"
                   "extern \"C\" __global__ void\n__launch_bounds__(TILE * 256)\n"
                   "saxpy(float* y, float a) { y[threadIdx.x] *= a; }\n");
        write_file(dir.path() / "k/model.toml", "[shape]\ntile = 8\n[[kernel]]\nname = \"saxpy\"\n"
                                                "defines = { TILE = \"${tile}\" }\n");
        const std::string src = " --src " + (dir.path() / "k").string();
        const std::string why = "saxpy.cu:5: error: entry saxpy declares __launch_bounds__ of 2048 "
                                "threads a block, above the 1024 a block can have";
        Run r = run_plain("compile saxpy -D TILE=8" + src);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out, why));
        CHECK(run_plain("compile saxpy -D TILE=4" + src).code == 0);
        // A kernel in a namespace: at its line too, by its C++ name.
        write_file(dir.path() / "n/nsaxpy.cu",
                   "#ifndef TILE\n#define TILE 4\n#endif\nnamespace blas {\n"
                   "__global__ void __launch_bounds__(TILE * 256)\n"
                   "nsaxpy(float* y, float a) { y[threadIdx.x] *= a; }\n}\n");
        const Run ns = run_plain("compile nsaxpy -D TILE=8 --src " + (dir.path() / "n").string());
        INFO(ns.out);
        CHECK(ns.code == 1);
        CHECK(contains(ns.out, "nsaxpy.cu:5: error: entry blas::nsaxpy declares __launch_bounds__ "
                               "of 2048 threads a block"));
        // With the disk cache on, twice: a record with such a bound is never served.
        for (int i = 0; i < 2; ++i) {
            r = kjit::test::run_kjit_in(dir.path(), "audit" + src,
                                        "KJIT_CACHE_DIR=" + (dir.path() / "cache").string() +
                                            " KJIT_DRIVER_LIBRARY=/nonexistent");
            INFO(r.out);
            CHECK(r.code == 1);
            CHECK(contains(r.out, "audit: 1 compiled, 1 failed"));
            CHECK(contains(r.out, why));
        }
    }

    TEST_CASE("a ledger row with a partial or negative or non-finite number is refused at its line") {
        test::TempDir dir;
        const fs::path csv = dir.path() / "l.csv";
        const std::string head = "kernel,variant,grid,block,smem,registers,blocks_per_sm,waves,"
                                 "sm_share,ms\n";
        const std::string good = "k,v,8x1x1,256x1x1,0,32,4,0.5,0.25,1.5\n";
        write_file(csv, head + good);
        CHECK(read_ledger_csv(csv).size() == 1);
        for (const char* bad :
             {"k,v,8x1x1,256x1x1,-1,32,4,0.5,0.25,1.5", "k,v,8x1x1,256x1x1,12abc,32,4,0.5,0.25,1.5",
              "k,v,0x1x1,256x1x1,0,32,4,0.5,0.25,1.5", "k,v,8x1,256x1x1,0,32,4,0.5,0.25,1.5",
              "k,v,8x1x1,256x1x1,0,-3,4,0.5,0.25,1.5", "k,v,8x1x1,256x1x1,0,32,4,nan,0.25,1.5",
              "k,v,8x1x1,256x1x1,0,32,4,0.5,0.25,inf", "k,v,8x1x1,256x1x1,0,32,4,0.5,0.25,-2"}) {
            INFO(bad);
            write_file(csv, head + good + bad + "\n");
            CHECK_THROWS_WITH_AS((void)read_ledger_csv(csv),
                                 doctest::Contains("l.csv:3: error: malformed ledger row"),
                                 ConfigError);
        }
        write_file(csv, head + "k,v,8x1x1,256x1x1,0,32,4,0.5,0.25,-1\n"); // -1: a launch not timed
        CHECK(read_ledger_csv(csv).size() == 1);
        CHECK_THROWS_WITH_AS((void)read_ledger_csv(dir.path()),
                             doctest::Contains("cannot read the launch ledger: Is a directory"),
                             ConfigError);
        // Another CSV, or an empty file, is no ledger of no launches.
        write_file(csv, "a,b\n");
        CHECK_THROWS_WITH_AS((void)read_ledger_csv(csv),
                             doctest::Contains("l.csv:1: error: not a launch ledger: its first "
                                               "line is not 'kernel,variant,grid,"),
                             ConfigError);
        write_file(csv, "");
        CHECK_THROWS_WITH_AS((void)read_ledger_csv(csv),
                             doctest::Contains("l.csv:1: error: not a launch ledger: the file is "
                                               "empty"),
                             ConfigError);
    }

    TEST_CASE("an option value out of its range is a usage error before anything runs") {
        const std::string sweep = std::string(KJIT_SOURCE_DIR) + "/kernel_src/rms_norm.sweep.toml";
        for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
                 {"specialize -j -3", "--jobs: Value -3 not in range 1 to 1024"},
                 {"check --seed -1",
                  "--seed: expected a whole number from 0 to 2^64 - 1, got '-1'"},
                 {"sweep --dry-run --devices foo " + sweep,
                  "--devices: --devices takes 'all' or ordinals such as 0,1; got 'foo'"},
                 {"sweep --dry-run --devices 0,1x " + sweep, "got '0,1x'"},
                 {"lint --arch foo", "--arch: bad architecture 'foo': expected sm_NN"},
                 {"audit --arch compute_80", "--arch: architecture 'compute_80' is virtual"},
                 {"compile rms_norm -D RMS_BLOCK=64 -D RMS_BLOCK=128",
                  "--define: RMS_BLOCK is given twice, as 64 and as 128: give it once"}}) {
            const Run r = run_plain(args);
            INFO(args << ": " << r.out);
            CHECK(r.code == 2);
            CHECK(contains(r.out, said));
            CHECK(!contains(r.out, "compiled"));
        }
    }

    TEST_CASE("kjit compile -o names why the file could not be written and leaves no part of it") {
        test::TempDir dir;
        const std::string src = " --src " + std::string(KJIT_SOURCE_DIR) + "/kernel_src";
        Run r =
            run_plain("compile rms_norm -o " + (dir.path() / "none" / "k.cubin").string() + src);
        CHECK(r.code == 2);
        CHECK(contains(r.out,
                       "k.cubin: error: cannot write the output file: No such file or directory"));
        r = run_plain("compile rms_norm -o " + dir.path().string() + src);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "error: cannot write the output file: Is a directory"));
        r = run_plain("compile rms_norm -o " + (dir.path() / "k.cubin").string() + src);
        CHECK(r.code == 0);
        CHECK(fs::file_size(dir.path() / "k.cubin") > 1000);
        std::size_t entries = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
            ++entries;
        CHECK(entries == 1); // no temporary left beside it
    }

} // TEST_SUITE
