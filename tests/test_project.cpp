// kjit.toml: the project file, the one source precedence, and the refusals that keep a
// project's CI from passing on input it never read.
#include "tests/support.hpp"

#include "core/error.hpp"
#include "core/warnings.hpp"
#include "jit/define_use.hpp"
#include "jit/embed_manifest.hpp"
#include "jit/freshness.hpp"
#include "jit/project.hpp"
#include "jit/shape_check.hpp"
#include "jit/source_choice.hpp"

#include "tests/doctest.hpp"

#include <cstdlib>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using kjit::test::contains;
using kjit::test::write_file;
using kjit::test::Run;
using kjit::test::run_kjit_in;
using kjit::test::TempDir;

const char* const kScale = R"(// y = 2 x, one element per thread.
#ifndef SCALE_BLOCK
#define SCALE_BLOCK 256
#endif
extern "C" __global__ void __launch_bounds__(SCALE_BLOCK)
scale(float* y, const float* x, int n) {
    const int i = blockIdx.x * SCALE_BLOCK + threadIdx.x;
    if (i < n)
        y[i] = 2.0f * x[i];
}
)";

const char* const kModel = R"([shape]
block = 256

[[kernel]]
name = "scale_wide"
source = "scale"
defines = { SCALE_BLOCK = "${block}" }
)";

/// A user's project: kjit.toml naming kernels/ and its shape file, one kernel.
void write_project(const fs::path& root, const std::string& model = kModel) {
    write_file(root / "kjit.toml", "# a user's project\n"
                              "kernels = \"kernels\"\n"
                              "shape_files = [\"kernels/model.toml\"]\n"
                              "archs = [\"sm_90\"]\n");
    write_file(root / "kernels" / "scale.cu", kScale);
    write_file(root / "kernels" / "model.toml", model);
}

/// Runs kjit in `dir` with a cache of its own, so the runs of this file share no entries.
Run kjit_in(const fs::path& dir, const std::string& args, const std::string& env = {}) {
    return run_kjit_in(dir, args,
                       "KJIT_CACHE_DIR='" + (dir / ".cache").string() + "'" +
                           (env.empty() ? "" : " " + env));
}

std::string config_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const kjit::ConfigError& e) {
        return e.what();
    }
    return "(no error)";
}

/// Sets an environment variable for one scope.
struct ScopedEnv {
    ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
    ~ScopedEnv() { unsetenv(name_); }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    const char* name_;
};

} // namespace

TEST_SUITE("project") {

TEST_CASE("a project file is read with its positions and found from any directory below it") {
    TempDir dir;
    write_project(dir.path());
    fs::create_directories(dir.path() / "src" / "deep");
    const auto found = kjit::Project::find(dir.path() / "src" / "deep");
    REQUIRE(found);
    CHECK(*found == dir.path() / "kjit.toml");
    const kjit::Project p = kjit::Project::load(*found);
    REQUIRE(p.kernels);
    CHECK(p.kernels->path == dir.path() / "kernels");
    CHECK(p.kernels->text == "kernels");
    CHECK(p.kernels->where.line == 2);
    CHECK(p.kernels->where.column == 11);
    REQUIRE(p.shape_files.size() == 1);
    CHECK(p.shape_files[0].path == dir.path() / "kernels" / "model.toml");
    CHECK(p.archs == std::vector<std::string>{"sm_90"});
    CHECK_FALSE(kjit::Project::find(fs::temp_directory_path()));
}

TEST_CASE("a project file with a mistake is an error at its file:line:col") {
    TempDir dir;
    write_file(dir.path() / "kernels" / "scale.cu", kScale);
    const auto error_of = [&](const std::string& text) {
        write_file(dir.path() / "kjit.toml", text);
        return config_error([&] { (void)kjit::Project::load(dir.path() / "kjit.toml"); });
    };
    CHECK(contains(error_of("kernels = \"kernels\"\nkernel_dirs = [\"x\"]\n"),
                   "kjit.toml:2:1: error: unknown key 'kernel_dirs' in the project file"));
    CHECK(contains(error_of("kernels = \"kernls\"\n"),
                   "kjit.toml:1:11: error: 'kernels' names kernls, which is not a directory"));
    CHECK(contains(error_of("kernels = \"kernels\"\nshape_files = [\"nope.toml\"]\n"),
                   "kjit.toml:2:16: error: 'shape_files' names nope.toml, which is not a file"));
    CHECK(contains(error_of("archs = [\"sm90\"]\n"),
                   "kjit.toml:1:10: error: bad architecture 'sm90': expected sm_NN"));
    // The same rule as --arch: a virtual architecture has no machine code.
    CHECK(contains(error_of("archs = [\"sm_90\", \"compute_90\"]\n"),
                   "kjit.toml:1:19: error: architecture 'compute_90' is virtual"));
    CHECK(contains(error_of("kernels = \"kernels\n"), "kjit.toml:1:"));
    CHECK(contains(error_of("kernels = 3\n"), "kjit.toml:1:11: error: 'kernels' must be a string"));
}

TEST_CASE("one precedence: flag then KJIT_KERNEL_DIR then the project file then embedded") {
    TempDir dir;
    write_project(dir.path());
    const kjit::Project p = kjit::Project::load(dir.path() / "kjit.toml");
    const auto flags_with = [](const std::string& kernel_dir) {
        kjit::Environment env;
        if (!kernel_dir.empty())
            env["KJIT_KERNEL_DIR"] = kernel_dir;
        return kjit::builtin_flags().resolve(env);
    };
    kjit::SourceChoice c = kjit::choose_sources("a/", flags_with("/e"), &p);
    CHECK(c.origin == kjit::SourceOrigin::flag);
    CHECK(c.text == "--src a/");
    c = kjit::choose_sources("", flags_with("/e"), &p);
    CHECK(c.origin == kjit::SourceOrigin::environment);
    CHECK(c.text == "KJIT_KERNEL_DIR=/e/");
    c = kjit::choose_sources("", flags_with(""), &p);
    CHECK(c.origin == kjit::SourceOrigin::project);
    CHECK(c.dir == dir.path() / "kernels");
    CHECK(contains(c.text, "kjit.toml:2 kernels/"));
    c = kjit::choose_sources("", flags_with(""), nullptr);
    CHECK(c.origin == kjit::SourceOrigin::embedded);
    CHECK(c.text == "embedded");
    CHECK(contains(config_error([&] { kjit::require_sources_on_disk(c, "kjit lint"); }),
                   "kjit lint reads kernel sources on disk and has none: "));
}

TEST_CASE("a define value with an operator outside parentheses is refused before it is injected") {
    // A define expands as text: "${block} + 256" makes the source's BLOCK / 32 read
    // 256 + 256 / 32.
    const kjit::ModelShape shape{{{"block", 256}, {"split", 4}}};
    const auto resolve = [&](const std::string& value) {
        kjit::KernelSpec spec;
        spec.name = "k";
        spec.defines["BLOCK"] = value;
        return kjit::resolve_defines(spec, shape).at("BLOCK");
    };
    for (const char* bad : {"${block} + 256", "${block}*${split}", "1 << 4", "${block} / 2",
                            "(${block}) - 1", "a && b", "${split} > 2 ? 8 : 4", "${split} == 4",
                            "${block} >= 128", "${split} != 2", "${block} > 1", "1<2", "X>1"}) {
        INFO(bad);
        CHECK(contains(config_error([&] { (void)resolve(bad); }),
                       "outside parentheses: a define expands as text"));
    }
    // A comma outside parentheses and template brackets: `__launch_bounds__(BLOCK)` would read
    // two arguments (a minimum of blocks per SM), `x * BLOCK` a comma expression.
    for (const char* bad : {"128, 2", "${block},${split}", "Vec<int, 2>, 3"}) {
        INFO(bad);
        CHECK(contains(config_error([&] { (void)resolve(bad); }),
                       "has a comma outside parentheses and template brackets: a define expands "
                       "as text, so `__launch_bounds__(BLOCK)` would read two arguments"));
    }
    // A leading zero: octal to the compiler, decimal to kjit's expressions.
    CHECK(
        contains(config_error([&] { (void)resolve("010"); }),
                 "has the integer 010, octal in C++ (010 = 8) and decimal in kjit's expressions"));
    CHECK(contains(config_error([&] { (void)resolve("010u"); }), "has the integer 010u"));
    CHECK(contains(config_error([&] { (void)resolve("(${split} * 08)"); }),
                   "has the integer 08, octal in C++ (where it is no number)"));
    // The same value either way (00 - 07), or a floating literal, decimal to C as well.
    for (const char* good :
         {"0", "00", "07", "0x10", "0.5", "0.5f", "01.5f", "010e0", "0ull", "(${block} * 10)"})
        CHECK_NOTHROW((void)resolve(good));
    CHECK(resolve("(${block} + 256)") == "(256 + 256)");
    for (const char* good : {"std::array<std::array<int, 2>, 3>",
                             "Vec<Vec<float, 2>>",
                             "Vec<Vec<float, 2>>*",
                             "-1",
                             "-${block}",
                             "1e-5f",
                             "0x1p-3",
                             "float*",
                             "const float *",
                             "unsigned int",
                             "std::array<float, 4>",
                             "__nv_bfloat16",
                             "(1 << 4)",
                             "f(${block} * 2)",
                             "a[${split} - 1]",
                             "\"x-y\"",
                             "(${split} > 2 ? 8 : 4)",
                             "Vec<float, 4>",
                             "std::array<int, 2>*",
                             "!${split}",
                             "cond<USE_BF16 == 1, __nv_bfloat16, float>::type",
                             "Int<${split} ? 8 : 4>",
                             "Int<${split} != 1>::value",
                             "f(1, 2)",
                             "{1, 2}"})
        CHECK_NOTHROW((void)resolve(good));
}

TEST_CASE("a shape file naming a kernel the sources lack is an error at its source key") {
    TempDir dir;
    write_project(dir.path(), "[[kernel]]\nname = \"wide\"\nsource = \"scael\"\n");
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path() / "kernels");
    const std::string e = config_error([&] {
        (void)kjit::load_checked_shape_file(dir.path() / "kernels" / "model.toml", set);
    });
    CHECK(contains(e, "model.toml:3:10: error: kernel 'wide' names source 'scael', which is no "
                      "kernel of the sources; did you mean 'scale'? (known: scale)"));
}

TEST_CASE("an injected define the source never names is found by a text check") {
    TempDir dir;
    write_file(dir.path() / "k.cu", "// SPLITK in a comment does not count\n"
                                    "#include \"k.cuh\"\n"
                                    "#ifndef SPLIT_K\n#define SPLIT_K 4\n#endif\n"
                                    "const int split = SPLIT_K;\n"
                                    "const char* s = \"SPLITK\";\n"
                                    "extern \"C\" __global__ void k() {}\n");
    write_file(dir.path() / "k.cuh", "#if FROM_HEADER > 1\n#endif\n");
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    const auto unread = kjit::unread_defines(
        set, set.kernel("k"), {{"SPLITK", "8"}, {"SPLIT_K", "8"}, {"FROM_HEADER", "2"}});
    REQUIRE(unread.size() == 1);
    CHECK(unread[0].name == "SPLITK");
    CHECK(unread[0].nearest == std::vector<std::string>{"SPLIT_K"});
    CHECK_FALSE(unread[0].redefined);
}

TEST_CASE("a function-like macro's parameter of a define's name does not read the define") {
    // In the body the name is the macro's argument: the injected SPLIT_K never reaches it.
    TempDir dir;
    write_file(dir.path() / "k.cu", "#define SCALE(SPLIT_K, x) ((SPLIT_K) * (x))\n"
                                    "#define WIDTH (TILE * 2)\n"
                                    "#define TWICE (BLOCK) (BLOCK * 2)\n" // object-like
                                    "extern \"C\" __global__ void k(int* p) {\n"
                                    "  p[0] = SCALE(2, WIDTH) + TWICE; }\n");
    write_file(dir.path() / "k.cuh", "#define HALF(ROWS) ((ROWS) / 2)\n");
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    const auto unread = kjit::unread_defines(
        set, set.kernel("k"), {{"SPLIT_K", "8"}, {"TILE", "4"}, {"BLOCK", "2"}, {"ROWS", "2"}});
    REQUIRE(unread.size() == 2);
    CHECK(unread[0].name == "ROWS"); // in a header it can include, read whole: still a parameter
    CHECK(unread[1].name == "SPLIT_K");
}

TEST_CASE("a define read only in branches the compile skips is not read") {
    // A knob left in an `#if 0` block: every sweep variant would be the same kernel.
    TempDir dir;
    write_file(dir.path() / "k.cu", "#if 0\nint a = DEAD_ONLY;\n#endif\n"
                                    "#ifndef TILE\n#define TILE 4\nint b = GUARDED_ONLY;\n#endif\n"
                                    "#ifdef MAYBE\nint c = UNKNOWN_BRANCH;\n#endif\n"
                                    "#if 0\n#elif 1\nint d = ELIF_TAKEN;\n#endif\n"
                                    "#include \"h.cuh\"\n"
                                    "extern \"C\" __global__ void k(int* p) { *p = TILE; }\n");
    write_file(dir.path() / "h.cuh", "#if 0\n#include \"dead.cuh\"\n#endif\n");
    write_file(dir.path() / "dead.cuh", "int e = IN_DEAD_HEADER;\n"); // not walked: read whole
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    std::map<std::string, std::string> defines;
    for (const char* name :
         {"DEAD_ONLY", "TILE", "GUARDED_ONLY", "UNKNOWN_BRANCH", "ELIF_TAKEN", "IN_DEAD_HEADER"})
        defines[name] = "8";
    const auto unread = kjit::unread_defines(set, set.kernel("k"), defines);
    REQUIRE(unread.size() == 2);
    CHECK(unread[0].name == "DEAD_ONLY");
    CHECK(unread[0].only_skipped);
    CHECK(unread[1].name == "GUARDED_ONLY");
    CHECK(unread[1].only_skipped);
    CHECK(contains(kjit::unread_reason(unread[0], "k.cu"),
                   "is read by k.cu only in branches the compile skips"));
}

TEST_CASE("a define whose only mention is its own #ifndef default is not read") {
    // A shared header's default: injecting the knob into a kernel that includes the header and
    // never reads it changes nothing, though the header tests it.
    TempDir dir;
    write_file(dir.path() / "common.cuh", "#pragma once\n#ifndef TILE\n#define TILE 16\n#endif\n"
                                          "#if !defined(WIDTH)\n#define WIDTH 4\n#else\n#endif\n"
                                          "#ifndef FAST\n#error FAST must be set\n#endif\n");
    write_file(dir.path() / "a.cu", "#include \"common.cuh\"\n"
                                    "extern \"C\" __global__ void a(int* p) { *p = TILE; }\n");
    write_file(dir.path() / "b.cu", "#include \"common.cuh\"\n"
                                    "extern \"C\" __global__ void b(int* p) { *p = 1; }\n");
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    const std::map<std::string, std::string> defines{{"TILE", "8"}, {"WIDTH", "2"}, {"FAST", "1"}};
    // a reads TILE; FAST's #ifndef guards an #error, no default: a test that counts.
    auto unread = kjit::unread_defines(set, set.kernel("a"), defines);
    REQUIRE(unread.size() == 1);
    CHECK(unread[0].name == "WIDTH");
    REQUIRE(unread[0].default_at);
    CHECK(unread[0].default_at->line == 5);
    unread = kjit::unread_defines(set, set.kernel("b"), defines);
    REQUIRE(unread.size() == 2);
    CHECK(unread[0].name == "TILE");
    CHECK(contains(kjit::unread_reason(unread[0], "b.cu"),
                   "is read by b.cu only in its own default, #ifndef TILE at " +
                       (dir.path() / "common.cuh").string() +
                       ":2, which the injected value skips: no line reads the value"));
    CHECK(unread[1].name == "WIDTH");
    // Not injected, the default is the value every read sees: nothing to find.
    CHECK(kjit::unread_defines(set, set.kernel("a"), {{"FAST", "1"}}).empty());

    // kjit lint's KJ002 (libclang sees the #ifndef test a read) and the Engine's check agree.
    write_file(dir.path() / "kjit.toml", "kernels = \".\"\nshape_files = [\"model.toml\"]\n");
    write_file(dir.path() / "model.toml", "[[kernel]]\nname = \"b\"\n"
                                          "defines = { TILE = 8, FAST = 1 }\n");
    for (const char* verb : {"lint", "specialize model.toml"}) {
        const Run r = kjit_in(dir.path(), verb);
        INFO(verb << ": " << r.out);
        if (contains(r.out, "clang rules (KJ002, KJ004) skipped"))
            continue;
        CHECK(r.code != 0);
        CHECK(contains(r.out, "model.toml:3:13: error: "));
        CHECK(contains(r.out, " only in its own default, #ifndef TILE at "));
    }
}

TEST_CASE("a define read only in the body of a macro nothing expands is not read") {
    // A header's VEC_BYTES reads VEC; a kernel that never expands VEC_BYTES never reads VEC.
    TempDir dir;
    write_file(dir.path() / "k.cu", "#define BYTES (VEC * 2)\n#define USED (TILE + 1)\n"
                                    "#define OUTER USED\n#if defined(COND_MACRO)\n#endif\n"
                                    "#define COND_MACRO (FLAG + 0)\n"
                                    "extern \"C\" __global__ void k(int* p) { *p = OUTER; }\n");
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    const auto unread =
        kjit::unread_defines(set, set.kernel("k"), {{"VEC", "4"}, {"TILE", "8"}, {"FLAG", "1"}});
    REQUIRE(unread.size() == 1); // TILE through OUTER and USED; FLAG through a tested macro
    CHECK(unread[0].name == "VEC");
    CHECK(unread[0].unexpanded_macro == "BYTES");
    CHECK(contains(kjit::unread_reason(unread[0], "k.cu"),
                   "is read by k.cu only in the body of macro BYTES, which nothing they compile "
                   "expands"));
    // A macro that pastes names macros no line spells (LOADS_4): every body counts.
    write_file(dir.path() / "p.cu",
               "#define CAT(a, b) a##b\n#define LOADS_4 (VEC * 4)\n"
               "extern \"C\" __global__ void p(int* q) { *q = CAT(LOADS_, 4); }\n");
    const kjit::SourceSet pasted = kjit::SourceSet::from_directory(dir.path());
    CHECK(kjit::unread_defines(pasted, pasted.kernel("p"), {{"VEC", "4"}}).empty());
    // A define read by another injected value or by a name expression is read; its own
    // #ifndef default alone is not.
    write_file(dir.path() / "t.cu",
               "#ifndef TILE_M\n#define TILE_M 64\n#endif\n"
               "template <int M> __global__ void t(int* q) { *q = M + BLOCK; }\n");
    const kjit::SourceSet templated = kjit::SourceSet::from_directory(dir.path());
    const std::vector<std::string> expressions{"t<TILE_M>"};
    CHECK(kjit::unread_defines(templated, templated.kernel("t"), {{"TILE_M", "8"}}).size() == 1);
    CHECK(kjit::unread_defines(templated, templated.kernel("t"), {{"TILE_M", "8"}}, expressions)
              .empty());
    CHECK(kjit::unread_defines(templated, templated.kernel("t"),
                               {{"BLOCK", "(WARPS * 32)"}, {"WARPS", "4"}})
              .empty());
}

TEST_CASE("an injected define the compile #defines again with no #if testing it is found") {
    // NVRTC keeps the file's value of a macro given with -D and #defined again, and warns at
    // most: the injected value would never reach the code.
    TempDir dir;
    write_file(dir.path() / "k.cu",
               "#include \"k.cuh\"\n"                                                 // 1
               "#ifndef GUARDED\n#define GUARDED 4\n#endif\n"                         // 2-4
               "#if !defined( NEGATED ) && !defined(OTHER)\n#define NEGATED 4\n"      // 5-6
               "#endif\n"                                                             // 7
               "#ifdef ELSE_ARM\n#elif __CUDA_ARCH__ >= 900\n#define ELSE_ARM 16\n"   // 8-10
               "#else\n#define ELSE_ARM 8\n#endif\n"                                  // 11-13
               "#if 0\n#define SKIPPED 4\n#endif\n"                                   // 14-16
               "/* #define COMMENTED 4 */\n"                                          // 17
               "#ifndef OTHER\n#define TILE \\\r\n  4\n#endif\n"                      // 18-21
               "#if !defined(CLAMP) || CLAMP == 0\n#undef CLAMP\n#define CLAMP 512\n" // 22-24
               "#endif\n"                                                             // 25
               "#ifndef DEFAULTS\n#include \"defaults.cuh\"\n#endif\n"                // 26-28
               "#if 0\n#include \"never.cuh\"\n#endif\n"                              // 29-31
               "#undef UNDONE\n#ifndef UNDONE\n#define UNDONE 2\n#endif\n"            // 32-35
               "extern \"C\" __global__ void k(int* p) { p[0] = GUARDED + NEGATED + ELSE_ARM\n"
               "  + SKIPPED + COMMENTED + TILE + CLAMP + DEFAULTS + NEVER + UNDONE + IN_HEADER\n"
               "  + STRAY; }\n");
    write_file(dir.path() / "k.cuh", "#pragma once\n#define IN_HEADER 2\n");
    write_file(dir.path() / "defaults.cuh", "#define DEFAULTS 1\n");
    write_file(dir.path() / "never.cuh", "#define NEVER 1\n");
    write_file(dir.path() / "stray.cuh", "#define STRAY 1\n"); // included by nothing
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    std::map<std::string, std::string> defines;
    for (const char* name : {"GUARDED", "NEGATED", "ELSE_ARM", "SKIPPED", "COMMENTED", "TILE",
                             "CLAMP", "DEFAULTS", "NEVER", "UNDONE", "IN_HEADER", "STRAY"})
        defines[name] = "8";
    const auto unread = kjit::unread_defines(set, set.kernel("k"), defines);
    REQUIRE(unread.size() == 3);
    const auto at = [](const kjit::UnreadDefine& u) {
        return u.redefined ? u.redefined->file->name + ":" + std::to_string(u.redefined->line) +
                                 "/" + std::to_string(u.redefined->undef_line)
                           : std::string("-");
    };
    CHECK(unread[0].name == "IN_HEADER");
    CHECK(at(unread[0]) == "k.cuh:2/0");
    CHECK(unread[1].name == "TILE");
    CHECK(at(unread[1]) == "k.cu:19/0");
    CHECK(unread[2].name == "UNDONE");
    CHECK(at(unread[2]) == "k.cu:34/32");
    const std::string k = (dir.path() / "k.cu").string();
    CHECK(kjit::unread_reason(unread[1], "k.cu") ==
          "is #defined again at " + k +
              ":19 with no #if that tests TILE around it: the file's value replaces the injected "
              "one (NVRTC keeps it and warns at most); put the file's default under #ifndef TILE");
    CHECK(contains(kjit::unread_reason(unread[2], "k.cu"),
                   "is #undef'd at " + k + ":32 and #defined again at " + k + ":34: "));
}

TEST_CASE("a #define in a branch no compile reads or in a continued comment replaces nothing") {
    TempDir dir;
    write_file(dir.path() / "k.cu", "#if (0)\n#define A 1\n#endif\n"
                                    "#if false\n#define B 1\n#endif\n"
                                    "#if 0\n#elif 0\n#define C 1\n#else\n#endif\n"
                                    "// a comment goes on \\\n#define D 1\n"
                                    "#if 0\n#else\n#define E 1\n#endif\n"
                                    "extern \"C\" __global__ void k(int* p) { *p = A+B+C+D+E; }\n");
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    const auto replaced = kjit::replaced_defines(
        set, set.kernel("k"), {{"A", "2"}, {"B", "2"}, {"C", "2"}, {"D", "2"}, {"E", "2"}});
    REQUIRE(replaced.size() == 1);
    CHECK(replaced.begin()->first == "E");
    CHECK(replaced.begin()->second.line == 16);
}

TEST_CASE("a #define in a raw string or in a comment after a digit separator replaces nothing") {
    TempDir dir;
    write_file(dir.path() / "k.cu",
               "const char* doc = R\"x(\n#define RAW 1\n)x\";\n"  // 1-3
               "constexpr int big = 1'000; /* a comment\n"        // 4
               "   #define SEPARATED 1 */\n"                      // 5
               "%:define DIGRAPH 1\n"                             // 6
               "#define SPLICED \\\n  1\n"                        // 7-8
               "/* a comment over\n   lines */ #define AFTER 1\n" // 9-10
               "  \\\n#define BEHIND_SPLICE 1\n"                  // 11-12
               "extern \"C\" __global__ void k(int* p) { *p = RAW + SEPARATED + DIGRAPH\n"
               "  + SPLICED + AFTER + BEHIND_SPLICE; }\n");
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    std::map<std::string, std::string> defines;
    for (const char* name : {"RAW", "SEPARATED", "DIGRAPH", "SPLICED", "AFTER", "BEHIND_SPLICE"})
        defines[name] = "2";
    std::vector<std::string> got;
    for (const auto& [name, r] : kjit::replaced_defines(set, set.kernel("k"), defines))
        got.push_back(name + ":" + std::to_string(r.line));
    CHECK(got ==
          std::vector<std::string>{"AFTER:10", "BEHIND_SPLICE:12", "DIGRAPH:6", "SPLICED:7"});
    CHECK_FALSE(
        kjit::names_identifier("auto s = u8R\"-(TILE\n)-\"; int n = 1'0; // TILE\n", "TILE"));
    CHECK(kjit::names_identifier("auto s = R\"(x)\"; int n = 1'0 + TILE;\n", "TILE"));
}

TEST_CASE("a #define after the last read of an injected define replaces nothing") {
    TempDir dir;
    write_file(dir.path() / "k.cu",
               "#define USE (BODY * 2)\n"                                              // 1
               "extern \"C\" __global__ void k(int* p) { *p = LAST + READ + BODY; }\n" // 2
               "#undef LAST\n#define LAST 4\n"                                         // 3-4
               "#undef READ\n#define READ 4\n#undef BODY\n#define BODY 4\n"            // 5-8
               "extern \"C\" __global__ void k2(int* p) { *p = READ + USE; }\n");      // 9
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    std::vector<std::string> got;
    for (const auto& [name, r] : kjit::replaced_defines(
             set, set.kernel("k"), {{"LAST", "8"}, {"READ", "8"}, {"BODY", "8"}}))
        got.push_back(name + ":" + std::to_string(r.line));
    // READ is read after its #define; BODY by a macro that expands there.
    CHECK(got == std::vector<std::string>{"BODY:8", "READ:6"});
    // #defined and never read: the file's value is the only one, refused as a redefinition;
    // read after it by a header the walk does not follow (a computed #include): refused too.
    write_file(dir.path() / "n.cu", "#define ONLY 8\n#define HDR \"h.cuh\"\n#define LATE 8\n"
                                    "#include HDR\n"
                                    "extern \"C\" __global__ void n(int* p) { *p = late(); }\n");
    write_file(dir.path() / "h.cuh", "__device__ int late() { return LATE; }\n");
    const kjit::SourceSet both = kjit::SourceSet::from_directory(dir.path());
    std::vector<std::string> unread;
    for (const auto& u :
         kjit::unread_defines(both, both.kernel("n"), {{"ONLY", "4"}, {"LATE", "4"}}))
        unread.push_back(u.name + (u.redefined ? ":" + std::to_string(u.redefined->line) : ""));
    CHECK(unread == std::vector<std::string>{"LATE:3", "ONLY:1"});
}

TEST_CASE("the conditionals kjit can tell decide which #define a compile reaches") {
    TempDir dir;
    write_file(dir.path() / "k.cu",
               "#ifdef RESET\n#undef RESET\n#endif\n#ifndef RESET\n#define RESET 4\n#endif\n" // 1-6
               "#ifdef TYPO\n#define TYPO 4\n#endif\n"                                        // 7-9
               "#ifdef __CUDACC_RTC__\n#else\n#define RTC 4\n#endif\n"                  // 10-13
               "#if 1\n#else\n#define ONE 4\n#endif\n"                                  // 14-17
               "#ifdef TUNED\n#else\n#define SENTINEL 4\n#endif\n"                      // 18-21
               "#ifndef TWICE\n#include \"once.cuh\"\n#endif\n#include \"again.cuh\"\n" // 22-25
               "#include \"cleanup.cuh\"\n#ifndef LATER\n#define LATER 4\n#endif\n"     // 26-29
               "extern \"C\" __global__ void k(int* p) { *p = RESET + TYPO + RTC + ONE\n"
               "  + SENTINEL + TWICE + LATER; }\n");
    write_file(dir.path() / "once.cuh", "#pragma once\n#define TWICE 4\n");
    write_file(dir.path() / "again.cuh", "#include \"once.cuh\"\n");
    write_file(dir.path() / "cleanup.cuh", "// done with it\n#undef LATER\n");
    const kjit::SourceSet set = kjit::SourceSet::from_directory(dir.path());
    std::map<std::string, std::string> defines;
    for (const char* name : {"RESET", "TYPO", "RTC", "ONE", "SENTINEL", "TUNED", "TWICE", "LATER"})
        defines[name] = "8";
    const auto replaced = kjit::replaced_defines(set, set.kernel("k"), defines);
    std::vector<std::string> got;
    for (const auto& [name, r] : replaced)
        got.push_back(name + " " + r.file->name + ":" + std::to_string(r.line) +
                      (r.undef_file
                           ? " after " + r.undef_file->name + ":" + std::to_string(r.undef_line)
                           : ""));
    CHECK(got == std::vector<std::string>{"LATER k.cu:28 after cleanup.cuh:2",
                                          "RESET k.cu:5 after k.cu:2", "TWICE once.cuh:2",
                                          "TYPO k.cu:8"});
}

TEST_CASE("every unread define of a kernel is named in one run") {
    TempDir dir;
    write_project(dir.path(), "[[kernel]]\nname = \"scale\"\n"
                              "defines = { SCALE_BLOK = 256, SCALE_BLOKC = 128 }\n");
    const Run r = kjit_in(dir.path(), "specialize");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "    kernels/model.toml:3:13: error: kernel 'scale': define SCALE_BLOK "
                          "is never read by kernels/scale.cu or the files it includes; did you "
                          "mean SCALE_BLOCK?\n    kernels/model.toml:3:31: error: kernel "
                          "'scale': define SCALE_BLOKC is never read"));
    const Run c = kjit_in(dir.path(), "compile scale -D SCALE_BLOK=1 -D SCALE_BLOKC=2");
    INFO(c.out);
    CHECK(c.code == 2);
    CHECK(contains(c.out, "kjit: error: define SCALE_BLOK (-D) is never read by "
                          "kernels/scale.cu or the files it includes; did you mean SCALE_BLOCK?\n"
                          "error: define SCALE_BLOKC (-D) is never read"));
    // One hint, after the last of them.
    CHECK(contains(c.out, "(KJIT_ALLOW_UNREAD_DEFINES=1 lets them through: "));
    CHECK(c.out.find("KJIT_ALLOW_UNREAD_DEFINES") == c.out.rfind("KJIT_ALLOW_UNREAD_DEFINES"));
}

TEST_CASE("Engine::prepare refuses an unread define at its shape file position or warns") {
    TempDir dir;
    write_project(dir.path(), "[[kernel]]\nname = \"wide\"\nsource = \"scale\"\n"
                              "defines = { SCALE_BLOK = 256 }\n");
    const kjit::ShapeFile file = kjit::ShapeFile::load(dir.path() / "kernels" / "model.toml");
    kjit::EngineOptions options;
    options.cache.use_disk = false;
    {
        kjit::Engine engine(nullptr, options, kjit::SourceProvider(dir.path() / "kernels"));
        const auto rows = engine.prepare(file.shape, file.kernels);
        REQUIRE(rows.size() == 1);
        REQUIRE(rows[0].error);
        CHECK(contains(config_error([&] { std::rethrow_exception(rows[0].error); }),
                       "model.toml:4:13: error: kernel 'wide': define SCALE_BLOK is never read "
                       "by " +
                           (dir.path() / "kernels" / "scale.cu").string() +
                           " or the files it includes; did you mean SCALE_BLOCK?"));
    }
    ScopedEnv allow("KJIT_ALLOW_UNREAD_DEFINES", "1");
    std::vector<kjit::Diagnostic> warnings;
    const auto previous =
        kjit::set_warning_sink([&](const kjit::Diagnostic& d) { warnings.push_back(d); });
    kjit::Engine engine(nullptr, options, kjit::SourceProvider(dir.path() / "kernels"));
    const auto rows = engine.prepare(file.shape, file.kernels);
    kjit::set_warning_sink(previous);
    REQUIRE(rows.size() == 1);
    CHECK_FALSE(rows[0].error);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].severity == kjit::Severity::warning);
    CHECK(warnings[0].line == 4);
    CHECK(contains(warnings[0].message, "define SCALE_BLOK is never read"));
}

TEST_CASE("verbs that read files on disk exit 2 outside any project and compiling verbs say embedded") {
    TempDir dir; // under the system temp directory: no kjit.toml above it
    for (const char* verb : {"lint", "sig", "fresh", "audit", "check", "sweep x.sweep.toml"}) {
        const Run r = kjit_in(dir.path(), verb);
        INFO(verb << ": " << r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "reads kernel sources on disk and has none: no kjit.toml in "));
    }
    const Run r = kjit_in(dir.path(), "compile rms_norm");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "sources: embedded\n"));
}

TEST_CASE(
    "the project option takes a file: a missing one and a directory are errors that say which") {
    TempDir dir;
    Run r = kjit_in(dir.path(), "lint --project nowhere.toml");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "nowhere.toml: error: project file does not exist"));
    r = kjit_in(dir.path(), "lint --project .");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, ".: error: is a directory, not a project file (--project takes the "
                          "file: ./kjit.toml)"));
}

TEST_CASE("a project file with no kernels directory is named as such and not reported missing") {
    TempDir dir;
    write_file(dir.path() / "kjit.toml", "archs = [\"sm_90\"]\n");
    Run r = kjit_in(dir.path(), "lint");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "kjit lint reads kernel sources on disk and has none: kjit.toml names "
                          "no `kernels` directory, no --src DIR and no KJIT_KERNEL_DIR (add "
                          "kernels = \"DIR\" to it, or pass --src DIR)"));
    // The one --project names, not the one found from the working directory.
    fs::create_directories(dir.path() / "other");
    write_file(dir.path() / "other" / "kjit.toml", "archs = [\"sm_90\"]\n");
    write_project(dir.path() / "sub");
    r = kjit_in(dir.path() / "sub", "lint --project ../other/kjit.toml");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "has none: " + (dir.path() / "other" / "kjit.toml").string() +
                              " names no `kernels` directory"));
}

TEST_CASE("every verb inside a project reads its kernels and says so") {
    TempDir dir;
    write_project(dir.path());
    fs::create_directories(dir.path() / "sub");
    Run r = kjit_in(dir.path() / "sub", "compile scale");
    INFO(r.out);
    CHECK(r.code == 0);
    // A project file above the working directory is shown by its absolute path.
    CHECK(contains(r.out, "sources: " + (dir.path() / "kjit.toml").string() + ":2 kernels/\n"));
    r = kjit_in(dir.path(), "audit");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "sources: kjit.toml:2 kernels/\n"));
    CHECK(contains(r.out, "  ok    scale_wide       sm_90"));
    CHECK(contains(r.out, "SCALE_BLOCK=256"));
    CHECK(contains(r.out, "fresh: skipped (this binary embeds no copy of kernels/)"));
    r = kjit_in(dir.path(), "lint");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "sources: kjit.toml:2 kernels/\n"));
    r = kjit_in(dir.path(), "fresh");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "kjit fresh: this kjit embeds no copy of kernels/ (its embedded kernels "
                          "are kjit's own): name the binaries to compare with the sources, "
                          "--binary APP or `binaries` in kjit.toml"));
    // kjit's own binary embeds kjit's kernel tree, which holds none of the project's files.
    r = kjit_in(dir.path(), "fresh --binary " + std::string(KJIT_BINARY));
    CHECK(r.code == 2);
    CHECK(contains(r.out, ": error: the binary embeds the kernel tree kernel_src/, which holds none "
                          "of the files compared with it"));
    r = kjit_in(dir.path(), "specialize");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit specialize kernels/model.toml: 1 kernel(s)"));
    // kjit's own contracts name kernels the project does not have: nothing to launch, with or
    // without a GPU (never a compile of rms_norm from the project's tree).
    r = kjit_in(dir.path(), "check");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "launch checks: no kernel contract names a kernel of the sources "
                          "(kjit.toml:2 kernels/): nothing to launch"));
    // --src and KJIT_KERNEL_DIR come before the project file; --project names another one.
    r = kjit_in(dir.path(), "compile rms_norm --src " + std::string(KJIT_SOURCE_DIR) + "/kernel_src");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "sources: --src " KJIT_SOURCE_DIR "/kernel_src/\n"));
    r = kjit_in(dir.path(), "compile rms_norm", "KJIT_KERNEL_DIR=" KJIT_SOURCE_DIR "/kernel_src");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "sources: KJIT_KERNEL_DIR=" KJIT_SOURCE_DIR "/kernel_src/\n"));
    TempDir outside;
    r = kjit_in(outside.path(), "lint --project " + (dir.path() / "kjit.toml").string());
    CHECK(r.code == 0);
    CHECK(contains(r.out, (dir.path() / "kjit.toml").string() + ":2 kernels/\n"));
}

TEST_CASE("a broken shape or project file stops every verb at its file:line:col with exit 2") {
    const std::vector<std::pair<std::string, std::string>> broken = {
        {"[[kernel]]\nname = \"w\"\nsource = \"scale\"\ndefine = { SCALE_BLOCK = 1 }\n",
         "kernels/model.toml:4:1: error: unknown key 'define' in [[kernel]]; did you mean "
         "'defines'?"},
        {"[[kernel]]\nname = \"w\"\nsource = \"scael\"\n",
         "kernels/model.toml:3:10: error: kernel 'w' names source 'scael', which is no kernel"},
        {"[[kernel]]\nname = \"w\"\nsource = \"scale\"\ndefines = { SCALE_BLOCK = \"${blk}\" }\n",
         "kernels/model.toml:4:27: error: kernel 'w': define SCALE_BLOCK names shape entry "
         "'blk', which the shape lacks"},
        {"[[kernel]\nname = \"w\"\n", "kernels/model.toml:1:"},
    };
    for (const auto& [model, message] : broken) {
        TempDir dir;
        write_project(dir.path(), model);
        for (const char* verb : {"audit", "lint", "specialize", "check"}) {
            const Run r = kjit_in(dir.path(), verb);
            INFO(verb << ": " << r.out);
            CHECK(r.code == 2);
            CHECK(contains(r.out, message));
        }
    }
    TempDir dir;
    write_project(dir.path());
    write_file(dir.path() / "kjit.toml", "kernels = \"kernels\"\nshape_file = []\n");
    for (const char* verb : {"audit", "lint", "compile scale", "specialize x.toml"}) {
        const Run r = kjit_in(dir.path(), verb);
        INFO(verb << ": " << r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "kjit.toml:2:1: error: unknown key 'shape_file' in the project "
                              "file; did you mean 'shape_files'?"));
    }
    // --shape-file names a shape file on every verb that reads them.
    write_file(dir.path() / "kjit.toml", "kernels = \"kernels\"\n");
    write_file(dir.path() / "other" / "bad.toml", "[[kernel]]\nname = \"w\"\nsource = \"nope\"\n");
    const Run r = kjit_in(dir.path(), "audit --shape-file other/bad.toml");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "other/bad.toml:3:10: error: kernel 'w' names source 'nope'"));
}

TEST_CASE("the audit compiles a shape file's instantiations as start-up does") {
    // A file of templates: the audit compiled it without the shape file's name expressions, so
    // a misspelt instantiation passed the audit and failed at start-up.
    TempDir dir;
    write_project(dir.path(), "[[kernel]]\nname = \"twice\"\n"
                              "instantiations = [\"ts::twice<flaot>\"]\n");
    write_file(dir.path() / "kernels" / "twice.cu",
               "namespace ts {\ntemplate <typename T>\n"
               "__global__ void twice(T* y, int n) { if (threadIdx.x < n) y[threadIdx.x] *= 2; }\n"
               "}\n");
    Run r = kjit_in(dir.path(), "audit");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "FAIL  twice            sm_90   (defaults)  [ts::twice<flaot>]"));
    CHECK(contains(r.out, "error: identifier \"flaot\" is undefined"));
    CHECK(contains(r.out, "kernels/model.toml:3: the instantiations twice names, compiled as "
                          "start-up compiles them"));
    CHECK(contains(r.out, "1 failed"));
    // Start-up says it at the shape file's `instantiations`, not at NVRTC's name map.
    r = kjit_in(dir.path(), "specialize kernels/model.toml");
    CHECK(r.code != 0);
    CHECK(contains(r.out, "kernels/model.toml:3:1: error: kernel 'twice': instantiation "
                          "'ts::twice<flaot>' names no template of twice.cu (NVRTC: "
                          "__nv_name_map:"));
    write_file(dir.path() / "kernels" / "model.toml",
               "[[kernel]]\nname = \"twice\"\ninstantiations = [\"ts::twice<float>\"]\n");
    r = kjit_in(dir.path(), "audit");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "ok    twice"));
    CHECK(contains(r.out, "(defaults)  [ts::twice<float>]"));
}

TEST_CASE("a kernel directory without kernels and a missing project tuned table fail the audit") {
    // An empty (or wrong) kernel directory: audit, check and lint had passed over nothing.
    TempDir dir;
    write_file(dir.path() / "kjit.toml", "kernels = \"kernels\"\n");
    fs::create_directories(dir.path() / "kernels");
    for (const char* verb : {"audit", "check"}) {
        const Run r = kjit_in(dir.path(), verb);
        INFO(verb << ": " << r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "error: no kernel in kjit.toml:1 kernels/: the directory holds no "
                              ".cu file, so there is nothing to audit or check"));
    }
    for (const char* verb : {"lint", "lint kernels"}) {
        const Run r = kjit_in(dir.path(), verb);
        INFO(verb << ": " << r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "kernels: error: holds no kernel source (.cu, or a header: .cuh, "
                              ".h, ...)"));
    }
    // The project's `tuned` naming no file: "0 entries, 0 finding(s)" and exit 0 before.
    write_project(dir.path());
    write_file(dir.path() / "kjit.toml", "kernels = \"kernels\"\ntuned = \"tuned.toml\"\n");
    Run r = kjit_in(dir.path(), "audit");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "kjit.toml:2:9: error: the tuned table tuned.toml does not exist: kjit "
                          "tune writes it (an empty file is an empty table), or correct `tuned`"));
    CHECK(contains(r.out, "; tuned: 1 finding(s)"));
    write_file(dir.path() / "tuned.toml", "");
    r = kjit_in(dir.path(), "audit");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "tuned: tuned.toml: 0 entries, 0 finding(s)"));
}

TEST_CASE("kjit fresh and kjit audit compare the binaries the project file names") {
    TempDir dir;
    write_project(dir.path());
    {
        std::ofstream(dir.path() / "kjit.toml", std::ios::app) << "binaries = [\"build/app\"]\n";
    }
    // Not built yet: the file's line says which binary is missing.
    Run r = kjit_in(dir.path(), "fresh");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "kjit.toml:5:13: error: 'binaries' names build/app, which does not "
                          "exist: build it first"));
    // The audit of a fresh clone runs before the build: it compiles and skips the comparison.
    r = kjit_in(dir.path(), "audit");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "fresh: skipped (build/app is not built)"));
    // A binary as kjit_embed_kernels() leaves it: the manifest of the tree among other bytes.
    const auto built = kjit::SourceSet::from_directory(dir.path() / "kernels");
    const auto build_app = [&] {
        write_file(dir.path() / "build" / "app",
              std::string("\x7f" "ELF", 4) + std::string(64, '\0') +
                  kjit::format_manifest(kjit::manifest_of(built, "kernels")) + std::string(8, '\0'));
    };
    build_app();
    r = kjit_in(dir.path(), "fresh");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit fresh: build/app: 1 embedded file(s) against kernels\n"));
    CHECK(contains(r.out, "fresh: up to date"));
    r = kjit_in(dir.path(), "audit");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "fresh: up to date"));
    // An edit after the build: both say which file, and fail.
    write_file(dir.path() / "kernels" / "scale.cu", std::string(kScale) + "// tuned\n");
    r = kjit_in(dir.path(), "fresh");
    CHECK(r.code == 1);
    CHECK(contains(r.out, "  stale    kernels/scale.cu"));
    r = kjit_in(dir.path(), "audit");
    CHECK(r.code == 1);
    CHECK(contains(r.out, "fresh: stale"));
    // --binary comes before the project's binaries.
    r = kjit_in(dir.path(), "fresh --binary /bin/sh");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "error: the binary embeds no kernel sources"));
}

TEST_CASE(
    "audit lints as it compiles and lint of the project's kernel files reads its shape files") {
    TempDir dir;
    // An include found through the project's include_dirs; a condition read only below sm_90,
    // on a knob nothing defines; a shape file apart from the kernels.
    write_file(dir.path() / "kjit.toml", "kernels = \"kernels\"\n"
                                         "include_dirs = [\"third/inc\"]\n"
                                         "shape_files = [\"shapes/model.toml\"]\n"
                                         "archs = [\"sm_80\"]\n");
    write_file(dir.path() / "third" / "inc" / "third.h", "#define THIRD_SCALE 2.0f\n");
    write_file(dir.path() / "kernels" / "scale.cu",
               std::string("#include <third.h>\n#if __CUDA_ARCH__ < 900\n#if SCALE_KNOB\n#endif\n"
                           "#endif\n") +
                   kScale);
    write_file(dir.path() / "shapes" / "model.toml", kModel);
    Run r = kjit_in(dir.path(), "audit");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(!contains(r.out, "KJ005"));
    CHECK(contains(r.out, "kernels/scale.cu:3:5: error: #if reads SCALE_KNOB"));
    CHECK(contains(r.out, "audit: 2 compiled, 0 failed; lint: 1 finding(s)"));
    // Linted for sm_90 the condition is not read.
    r = kjit_in(dir.path(), "audit --arch sm_90");
    CHECK(r.code == 0);
    CHECK(contains(r.out, "lint: 0 finding(s)"));

    // A define the shape file injects and the source never reads: found from the kernel file
    // as from the project (a clang rule: where libclang is missing lint says it skipped it).
    write_file(dir.path() / "kjit.toml",
               "kernels = \"kernels\"\nshape_files = [\"shapes/model.toml\"]\n");
    write_file(dir.path() / "kernels" / "scale.cu", kScale);
    std::string model = kModel;
    model.replace(model.find("SCALE_BLOCK ="), 13, "SCALE_BLOK =");
    write_file(dir.path() / "shapes" / "model.toml", model);
    write_file(dir.path() / "kernels" / "ops" / "other.cu", kScale);
    for (const char* args : {"lint", "lint kernels", "lint kernels/scale.cu",
                             "lint kernels/ops/other.cu kernels/scale.cu"}) {
        r = kjit_in(dir.path(), args);
        INFO(args << ": " << r.out);
        if (contains(r.out, "clang rules (KJ002, KJ004) skipped")) {
            CHECK(r.code == 0);
            continue;
        }
        CHECK(r.code == 1);
        CHECK(contains(r.out, "shapes/model.toml:7:13: error: SCALE_BLOK=256 is injected into "
                              "kernel 'scale_wide' but scale.cu never tests or expands it"));
    }
    // A file outside the project's kernels takes the shape files beside it (none).
    write_file(dir.path() / "other" / "scale.cu", kScale);
    r = kjit_in(dir.path(), "lint other/scale.cu");
    CHECK(r.code == 0);
    // bench and digest name the contracts of this project's kernels: none, not kjit's own.
    for (const char* args : {"bench scale", "digest record scale"}) {
        r = kjit_in(dir.path(), args);
        INFO(args << ": " << r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "no bench or digest case for kernel 'scale' (known: none): a kernel "
                              "is benched and digested through its contract"));
    }
    // An architecture that is no real one is a usage error on every verb that takes one.
    for (const char* args : {"lint --arch foo", "audit --arch compute_80",
                             "sig --verify --arch sm_", "sweep --dry-run --arch sm80"}) {
        r = kjit_in(dir.path(), args);
        INFO(args << ": " << r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "--arch"));
    }
}

TEST_CASE("another tool's TOML beside the kernels is not a shape file and a near miss still is") {
    TempDir dir;
    write_file(dir.path() / "kernels" / "scale.cu", kScale);
    write_file(dir.path() / "kernels" / "model.toml", kModel);
    write_file(dir.path() / "kernels" / "pyproject.toml",
          "[build-system]\nrequires = [\"setuptools\"]\n\n[project]\nname = \"scale\"\n");
    // An empty tuned table, as the README starts one, is not a shape file either.
    write_file(dir.path() / "kernels" / "tuned.toml", "");
    CHECK(kjit::shape_files_beside(dir.path() / "kernels") ==
          std::vector<fs::path>{dir.path() / "kernels" / "model.toml"});
    Run r = kjit_in(dir.path(), "lint kernels");
    INFO(r.out);
    CHECK(r.code == 0);
    // A typo of [[kernel]] is a shape file with a mistake, fail closed.
    write_file(dir.path() / "kernels" / "extra.toml", "[[kernels]]\nname = \"scale\"\n");
    r = kjit_in(dir.path(), "lint kernels");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "extra.toml:1:3: error: unknown key 'kernels' in the shape file; did you "
                          "mean 'kernel'?"));
}

TEST_CASE("a project that reads no shape file says so and names one it leaves unread") {
    TempDir dir;
    write_file(dir.path() / "kjit.toml", "kernels = \"kernels\"\narchs = [\"sm_90\"]\n");
    write_file(dir.path() / "kernels" / "scale.cu", kScale);
    Run r = kjit_in(dir.path(), "audit");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "shapes: none read (kjit.toml names no shape_files and kernels/ holds "
                          "none): each kernel is compiled with its defaults only"));
    // One elsewhere in the project (not in a build tree or a hidden directory) was meant.
    write_file(dir.path() / "shapes" / "model.toml", kModel);
    write_file(dir.path() / "build" / "CMakeCache.txt", "");
    write_file(dir.path() / "build" / "copy.toml", kModel);
    write_file(dir.path() / ".git" / "copy.toml", kModel);
    CHECK(kjit::shape_files_under(dir.path()) ==
          std::vector<fs::path>{dir.path() / "shapes" / "model.toml"});
    for (const char* verb : {"audit", "check"}) {
        r = kjit_in(dir.path(), verb, "KJIT_DRIVER_LIBRARY=/nonexistent");
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out, "kjit.toml: error: shapes/model.toml declares [[kernel]] tables, but "
                              "no shape file is read (kjit.toml names no shape_files and kernels/ "
                              "holds none): its production define sets are not audited; add "
                              "shape_files = [\"shapes/model.toml\"]"));
        CHECK(contains(r.out, "; shapes: 1 finding(s)"));
    }
}

} // TEST_SUITE
