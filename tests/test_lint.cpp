#include "tests/lint_support.hpp"

#include "core/names.hpp"
#include "lint/evaluate.hpp"
#include "lint/lint.hpp"
#include "lint/rules.hpp"
#include "lint/rules_text.hpp"
#include "lint/scanner.hpp"

#include "tests/doctest.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

namespace {
using kjit::test::contains;
using kjit::test::write_file;
using kjit::test::formatted;
using kjit::test::join_lines;
using kjit::test::libclang;
using kjit::test::lint_dir;
using kjit::test::lint_source;
using kjit::test::Run;
using kjit::test::run_kjit;
using namespace kjit::lint;

const std::filesystem::path& kFixtures = kjit::test::kLintFixtures;
const std::filesystem::path& kKernels = kjit::test::kKernelSources;

bool needs_clang(const std::string& rule) {
    const auto& r = rules();
    return std::any_of(r.begin(), r.end(),
                       [&](const Rule& x) { return x.id == rule && x.needs_clang; });
}

// Every `// expect: DIAGNOSTIC` line of the fixtures, as the full diagnostic: a location
// without a file is the fixture's own, a file name is one beside it.
std::vector<std::string> expected_diagnostics(const kjit::SourceSet& set, bool with_clang) {
    std::vector<std::string> out;
    for (const auto& f : set.files()) {
        std::istringstream in(f.text);
        int count = 0;
        for (std::string line; std::getline(in, line);) {
            const std::string marker = "// expect: ";
            if (!line.starts_with(marker))
                continue;
            ++count;
            std::string d = line.substr(marker.size());
            const std::string rule = d.substr(d.rfind('[') + 1, 5);
            if (!with_clang && needs_clang(rule))
                continue;
            out.push_back(std::isdigit(static_cast<unsigned char>(d[0]))
                              ? f.path + ":" + d
                              : (kFixtures / d.substr(0, d.find(':'))).string() +
                                    d.substr(d.find(':')));
        }
        INFO(f.path);
        CHECK(count > 0);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<kjit::Diagnostic> lint_string(const std::string& text) {
    return lint_text({"k.cu", "k.cu", text, {}, 0});
}

} // namespace

TEST_SUITE("lint") {

    TEST_CASE("every lint fixture produces exactly the diagnostics it expects") {
        const Libclang* clang = libclang();
        const kjit::SourceSet set = kjit::SourceSet::from_directory(kFixtures);
        const auto want = expected_diagnostics(set, clang != nullptr);
        const auto got = formatted(lint_dir(kFixtures, clang));
        INFO("expected:\n" << join_lines(want) << "got:\n" << join_lines(got));
        CHECK(want.size() >= 10);
        CHECK(got == want);
    }

    // How long it takes is measured by bench/bench_lint (timing belongs in benchmarks).
    TEST_CASE("kernel_src produces no lint findings") {
        const LintReport report = lint_dir(kKernels, libclang());
        INFO(join_lines(formatted(report)));
        CHECK(report.findings.empty());
        CHECK(report.files >= 2);
    }

    TEST_CASE("kjit lint exits 0 on kernel_src and 1 with compiler-format lines on the fixtures") {
        Run r = kjit::test::run_kjit_in(KJIT_SOURCE_DIR, "lint");
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(contains(r.out, "0 error(s), 0 warning(s)"));
        r = run_kjit("lint --embedded");
        CHECK(r.code == 0);
        r = run_kjit("lint " + kFixtures.string());
        CHECK(r.code == 1);
        CHECK(contains(r.out, (kFixtures / "kj001_cut_define.cu").string() +
                                  ":8:5: error: this line ends with '\\'"));
        CHECK(
            contains(r.out, (kFixtures / "kj002_unread_define.toml").string() + ":8:13: error: "));
        CHECK(contains(r.out, "did you mean BLOCK_ROWS? [KJ002]"));
        CHECK(contains(r.out, "warning: default CHUNK=64"));
        CHECK(contains(r.out, "lint: 21 file(s), 20 error(s), 1 warning(s)"));
        // One file: its directory's headers resolve, its shape files apply.
        r = run_kjit("lint " + (kFixtures / "kj004_default_differs.cu").string());
        CHECK(r.code == 1);
        CHECK(contains(r.out, "lint: 1 file(s), 0 error(s), 1 warning(s)"));
        // A second production kernel that injects no CHUNK runs the default (a tuned kernel on
        // a GPU its table has no entry for): the default is a production value then.
        kjit::test::TempDir dir;
        std::filesystem::copy(kFixtures / "kj004_default_differs.cu", dir.path());
        kjit::test::write_file(dir.path() / "kj004_default_differs.toml",
                               "[[kernel]]\nname = \"chunked\"\nsource = \"kj004_default_differs\"\n"
                               "defines = { CHUNK = 128 }\n[[kernel]]\nname = \"tuned\"\n"
                               "source = \"kj004_default_differs\"\n");
        r = run_kjit("lint " + (dir.path() / "kj004_default_differs.cu").string());
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(contains(r.out, "lint: 1 file(s), 0 error(s), 0 warning(s)"));
        // --shape takes one file per use: the file after it stays the file to lint (a greedy
        // option read it as a second shape file and linted the default tree instead).
        r = run_kjit("lint --shape " + (dir.path() / "kj004_default_differs.toml").string() + " " +
                     (kFixtures / "kj001_cut_define.cu").string());
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out, (kFixtures / "kj001_cut_define.cu").string() + ":"));
        CHECK(contains(r.out, "lint: 1 file(s), 1 error(s)"));
    }

    TEST_CASE("a byte 0xFF where NVRTC stops reading is an error at its line and column") {
        // NVRTC compiles such a file without a word and without the kernels after the byte;
        // 0xFE and UTF-8 are read through.
        kjit::test::TempDir dir;
        const std::string ka = "extern \"C\" __global__ void ka(float* y) { y[0] = 1.f; }\n";
        const std::string kb = "extern \"C\" __global__ void kb(float* y) { y[0] = 2.f; }\n";
        kjit::test::write_file(dir.path() / "ff.cu", ka + "// caf\xff\n" + kb);
        kjit::test::write_file(dir.path() / "fe.cu", ka + "// caf\xc3\xa9 \xfe\n" + kb);
        Run r = run_kjit("lint " + (dir.path() / "ff.cu").string());
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(
            contains(r.out, (dir.path() / "ff.cu").string() +
                                ":2:7: error: byte 0xFF (not UTF-8): NVRTC reads it as the end of "
                                "the file, so the rest of this line and the 1 line(s) after it "
                                "are never compiled; save the file as UTF-8 [KJ010]"));
        r = run_kjit("lint " + (dir.path() / "fe.cu").string());
        INFO(r.out);
        CHECK(r.code == 0);
        // The audit lints before it compiles, so a tree with such a file fails there too.
        std::filesystem::remove(dir.path() / "fe.cu");
        r = kjit::test::run_kjit_in(dir.path(), "audit --src .");
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out, "[KJ010]"));
    }

    TEST_CASE("the text rules run without libclang and the clang rules say they were skipped") {
        const Run r = run_kjit("lint --libclang /nonexistent/libclang.so.1 " + kFixtures.string());
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out,
                       "kjit lint: note: clang rules (KJ002, KJ004) skipped: cannot use "
                       "libclang: /nonexistent/libclang.so.1"));
        CHECK(contains(r.out, "[KJ001]"));
        CHECK(contains(r.out, "[KJ003]"));
        CHECK(contains(r.out, "[KJ005]"));
        CHECK(contains(r.out, "[KJ008]"));
        CHECK(contains(r.out, "[KJ009]"));
        CHECK_FALSE(contains(r.out, "[KJ002]"));
        CHECK(contains(r.out, "lint: 21 file(s), 18 error(s), 0 warning(s)"));
        CHECK(kjit::test::run_kjit_in(KJIT_SOURCE_DIR, "lint --libclang /nonexistent/libclang.so.1").code == 0);
    }

    TEST_CASE("kjit lint --json prints an array of path line column severity rule and message") {
        Run r = run_kjit("lint --json " + (kFixtures / "kj004_default_differs.cu").string());
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(contains(r.out,
                       "[\n {\"path\": \"" + (kFixtures / "kj004_default_differs.cu").string() +
                           "\", \"line\": 6, \"column\": 9, \"severity\": \"warning\", "
                           "\"rule\": \"KJ004\", \"message\": \"default CHUNK=64 matches no "));
        CHECK(contains(r.out, "}\n]\n"));
        r = kjit::test::run_kjit_in(KJIT_SOURCE_DIR, "lint --json");
        CHECK(r.code == 0);
        CHECK(r.out == "[]\n");
    }

    TEST_CASE("kjit lint --rules lists every rule with its doc") {
        const Run r = run_kjit("lint --rules");
        CHECK(r.code == 0);
        for (const auto& rule : rules()) {
            CHECK(contains(r.out, std::string(rule.id) + "  "));
            CHECK(contains(r.out, std::string(rule.doc)));
        }
    }

    TEST_CASE("kjit lint usage errors exit 2") {
        Run r = run_kjit("lint /nonexistent/k.cu");
        CHECK(r.code == 2);
        CHECK(contains(r.out, "/nonexistent/k.cu: error: no such file or directory"));
        r = run_kjit("lint --embedded " + (kKernels / "rms_norm.cu").string());
        CHECK(r.code == 2);
        CHECK(contains(r.out, "--embedded takes no FILES"));
        r = run_kjit("lint " + (kKernels / "model.toml").string());
        CHECK(r.code == 2);
        CHECK(contains(r.out, "not a kernel source"));
        kjit::test::TempDir dir;
        write_file(dir.path() / "bad.toml", "[[kernel]]\nname = \"x\"\ndefines = { A = \"${nope}\" }\n");
        r = run_kjit("lint --shape " + (dir.path() / "bad.toml").string());
        CHECK(r.code == 2);
        CHECK(contains(r.out, "names shape entry 'nope', which the shape lacks"));
    }

    TEST_CASE("a define read through another macro or only tested counts as read") {
        const Libclang* clang = libclang();
        if (!clang)
            return kjit::test::skip("libclang not found: the clang rules are not exercised");
        kjit::test::TempDir dir;
        write_file(dir.path() / "tile.cuh", "#pragma once\n#define SMEM_FLOATS (TILE * 4)\n");
        // TILE has no default: the engine always injects it, and only SMEM_FLOATS reads it.
        write_file(dir.path() / "k.cu", "#include \"tile.cuh\"\n"
                                   "#ifdef FAST_EXP\n#define EXP __expf\n#endif\n"
                                   "extern \"C\" __global__ void k(float* y) {\n"
                                   "    __shared__ float s[SMEM_FLOATS];\n    y[0] = s[0];\n}\n");
        write_file(dir.path() / "shape.toml",
              "[[kernel]]\nname = \"k\"\ndefines = { TILE = 32, FAST_EXP = 1 }\n"
              "[[kernel]]\nname = \"k_wide\"\nsource = \"k\"\n"
              "defines = { TILE = 64, FAST_EXPO = 1 }\n");
        const auto got = formatted(lint_dir(dir.path(), clang));
        INFO(join_lines(got));
        REQUIRE(got.size() == 1);
        CHECK(contains(got[0],
                       "shape.toml:7:24: error: FAST_EXPO=1 is injected into kernel 'k_wide'"));
        CHECK(contains(got[0], "did you mean FAST_EXP? [KJ002]"));
    }

    TEST_CASE("a knob default that matches one production value is not flagged") {
        const Libclang* clang = libclang();
        if (!clang)
            return kjit::test::skip("libclang not found: the clang rules are not exercised");
        kjit::test::TempDir dir;
        write_file(dir.path() / "k.cu",
              "#ifndef BLOCK\n#define BLOCK 0x100u\n#endif\n"
              "#if BLOCK > 128 && defined(BLOCK)\n#endif\n"
              "#if defined(OPTIONAL_KNOB) && OPTIONAL_KNOB > 2\n#endif\n"
              "extern \"C\" __global__ void __launch_bounds__(BLOCK) k() {}\n");
        write_file(dir.path() / "shape.toml", "[[kernel]]\nname = \"k\"\ndefines = { BLOCK = 1024 }\n"
                                         "[[kernel]]\nname = \"k_small\"\nsource = \"k\"\n"
                                         "defines = { BLOCK = 256 }\n");
        CHECK(lint_dir(dir.path(), clang).findings.empty());
        write_file(dir.path() / "shape.toml", "[[kernel]]\nname = \"k\"\ndefines = { BLOCK = 1024 }\n");
        const auto got = formatted(lint_dir(dir.path(), clang));
        REQUIRE(got.size() == 1);
        CHECK(contains(got[0],
                       "k.cu:2:9: warning: default BLOCK=0x100u matches no production value "
                       "(1024 for kernel 'k' in shape.toml)"));

        // A shared header's default is production where another kernel injects its value.
        write_file(dir.path() / "common.cuh", "#pragma once\n#ifndef VEC\n#define VEC 2\n#endif\n");
        write_file(dir.path() / "k.cu",
                   "#include \"common.cuh\"\n"
                   "extern \"C\" __global__ void k(float* y) { y[0] = VEC; }\n");
        write_file(dir.path() / "j.cu",
                   "#include \"common.cuh\"\n"
                   "extern \"C\" __global__ void j(float* y) { y[0] = VEC; }\n");
        write_file(dir.path() / "shape.toml", "[[kernel]]\nname = \"k\"\ndefines = { VEC = 4 }\n"
                                              "[[kernel]]\nname = \"j\"\ndefines = { VEC = 2 }\n");
        CHECK(formatted(lint_dir(dir.path(), clang)).empty());
        write_file(dir.path() / "shape.toml", "[[kernel]]\nname = \"k\"\ndefines = { VEC = 4 }\n"
                                              "[[kernel]]\nname = \"j\"\ndefines = { VEC = 8 }\n");
        CHECK_FALSE(formatted(lint_dir(dir.path(), clang)).empty());
    }

    TEST_CASE("a continuation lost on the last line of a body that stops mid-statement is KJ001") {
        // The loop's statement was the body's last line: cut off, it is top-level code.
        const std::string cut = "#define REDUCE(v, op) \\\n"
                                "    for (int o = 16; o > 0; o >>= 1)\n"
                                "        v = op(v, __shfl_xor_sync(~0u, v, o))\n";
        auto f = lint_string(cut);
        REQUIRE(f.size() == 1);
        CHECK(f[0].format() ==
              "k.cu:3:9: error: the #define of REDUCE (line 1) stops mid-statement on line 2 and "
              "this deeper-indented line goes on with it: missing '\\' at the end of line 2; this "
              "line is not part of the macro [KJ001]");
        // The same after an operator (the open parenthesis is KJ007 as well).
        f = lint_string("#define SUM(a, b) \\\n    ((a) +\n        (b))\n");
        REQUIRE(f.size() == 2);
        CHECK(std::count_if(f.begin(), f.end(), [](const kjit::Diagnostic& d) {
                  return d.rule == "KJ001" && d.line == 3;
              }) == 1);
        // Whole bodies followed by code, and a one-line loop macro used on the next line.
        CHECK(lint_string("#define REDUCE(v, op) \\\n    for (int o = 16; o > 0; o >>= 1) \\\n"
                          "        v = op(v, o)\n    int x = 1;\n")
                  .empty());
        CHECK(lint_string("#define EACH(i) \\\n    for (int i = 0; i < 4; ++i)\nEACH(k) f(k);\n")
                  .empty());
        CHECK(lint_string("#define EACH(i) for (int i = 0; i < 4; ++i)\n    EACH(k) f(k);\n")
                  .empty());
        // do { } while (0) is a whole statement; a loop macro used on the next, deeper line.
        CHECK(lint_string("void k() {\n#define ACC(j) \\\n  do { acc += in[j]; } while (0)\n"
                          "    ACC(1);\n}\n")
                  .empty());
        CHECK(lint_string("#define EACH_TILE(t) \\\n  for (int t = 0; t < 4; ++t)\n"
                          "    EACH_TILE(t) acc += a[t];\n")
                  .empty());
    }

    TEST_CASE("a continuation lost before a line that reads a macro parameter is KJ001") {
        // The last continuation lost after `_Pragma("unroll")`: the loop it was for is top-level
        // code.
        auto f = lint_string("#define ROWS(r) \\\n    _Pragma(\"unroll\")\n"
                             "        for (int r = 0; r < 4; ++r) acc += x[r];\n");
        REQUIRE(f.size() == 1);
        CHECK(f[0].format() ==
              "k.cu:3:9: error: the #define of ROWS (line 1) stops mid-statement on line 2 and "
              "this deeper-indented line goes on with it: missing '\\' at the end of line 2; this "
              "line is not part of the macro [KJ001]");
        // A function-like macro whose first continuation is lost: its body is empty.
        f = lint_string("#define FMA(a, b)\n    ((a) * (b) + acc)\nint y;\n");
        REQUIRE(f.size() == 1);
        CHECK(f[0].format() ==
              "k.cu:2:5: error: the #define of FMA (line 1) ends on line 1, but this line, "
              "indented as its body, reads its parameter 'a': missing '\\' at the end of line 1; "
              "this line is not part of the macro [KJ001]");
        // Lost between two whole statements, so no later line ends in a continuation.
        f = lint_string("#define STEP(i) \\\n    acc += a[i]; \\\n    acc += b[i];\n"
                        "    acc += c[i];\n\nint y;\n");
        REQUIRE(f.size() == 1);
        CHECK(f[0].line == 4);
        CHECK(f[0].rule == "KJ001");
        CHECK(contains(f[0].message, "reads its parameter 'i'"));
        // Code after a macro that reads none of its parameters, is the macro's own use, or sits
        // at the #define's indentation is not a finding; nor is an object-like macro.
        CHECK(lint_string("void k() {\n#define AT(i) \\\n    data[(i)]\n    float acc = 0.f;\n}\n")
                  .empty());
        CHECK(lint_string("#define AT(i) \\\n    data[(i)]\nint i = 0;\n").empty());
        // Inside a function the code after a local macro may read a name of the function's own
        // that a parameter shares; in a namespace it may not.
        CHECK(lint_string("extern \"C\" __global__ void k(int op) {\n#define CASE(op) \\\n"
                          "  case op: return;\n  switch (op) { CASE(1) }\n}\n")
                  .empty());
        f = lint_string("namespace n {\nextern \"C\" {\n#define STEP(i) \\\n    acc += a[i];\n"
                        "    acc += b[i];\n}\n}\n");
        REQUIRE(f.size() == 1);
        CHECK(f[0].line == 5);
        // In a namespace whose code before the macro is indented, a line indented as that code is
        // the namespace's; one indented deeper is the lost body.
        CHECK(lint_string("namespace n {\n    int f(int x);\n#define SQ(x) \\\n    ((x) * (x))\n"
                          "    int g(int x) { return SQ(x); }\n}\n")
                  .empty());
        f = lint_string("namespace n {\n    int f(int x);\n#define SQ(x) \\\n        (x) *= (x);\n"
                        "        (x) += 1\n}\n");
        REQUIRE(f.size() == 1);
        CHECK(f[0].line == 5);
        // The namespace's code after the macro counts as well, past a break: the lines right
        // after a body, up to a blank line, a comment or a directive, may be the lost body.
        CHECK(lint_string("namespace n {\n#define SQ(x) \\\n    ((x) * (x))\n    float y = SQ(x);\n"
                          "\n    int g();\n}\n")
                  .empty());
        f = lint_string("namespace n {\n#define SQ(x) \\\n    ((x) * (x))\n    float y = SQ(x);\n"
                        "    int g();\n}\n");
        REQUIRE(f.size() == 1);
        CHECK(f[0].line == 4);
        f = lint_string("namespace n {\n#define ACC(i) \\\n    acc += a[i]; \\\n    acc += b[i];\n"
                        "    acc += c[i];\n    acc += d[i];\n}\n");
        REQUIRE(f.size() == 1);
        CHECK(f[0].line == 5);
        // Two macros cut the same way in one namespace are both found.
        f = lint_string("namespace n {\n#define A(i) \\\n    acc += a[i]; \\\n    acc += b[i];\n"
                        "    acc += c[i];\n#define B(j) \\\n    acc += a[j]; \\\n"
                        "    acc += b[j];\n    acc += c[j];\n}\n");
        REQUIRE(f.size() == 2);
        CHECK(f[0].line == 5);
        CHECK(f[1].line == 9);
        // The line after a one-line #define with a body is the namespace's code.
        CHECK(lint_string("namespace n {\n#define TILE 16\n    constexpr int kTile = TILE;\n"
                          "#define SQ(x) \\\n    ((x) * (x))\n"
                          "    __global__ void k(float* y) { y[0] = SQ(y[1]) + x; }\n}\n")
                  .empty());
        // A function or template head declares the name it shares with the macro: the
        // namespace's own code, though it is the only code there.
        for (const char* head :
             {"    __device__ float g(float x) { return SQ(x); }\n",
              "    __device__ float g(float x);\n",
              "    __device__ float g(const float* p,\n                       int x) {\n"
              "        return SQ(p[x]);\n    }\n",
              "    __global__ void __launch_bounds__(256) k(float* x) { x[0] = SQ(x[1]); }\n",
              "    template <typename T> __device__ T sq(T x) { return SQ(x); }\n",
              "    template <typename F> __device__ void run(F&& x) { x(); }\n",
              "    template <typename A = v<v<float>>, typename x = float> __device__ x g();\n",
              "    __device__ float g(Array<Array<float, 2>> x) { return SQ(x[0][0]); }\n",
              "    __device__ float2 operator*(float2 v, float x) { return v; }\n",
              "    __device__ void g(float x[4]);\n",
              "    __global__ void k(const float* x\n                      , int n) {}\n",
              "    template <typename F, typename... x> __device__ void run(F f, x... xs);\n",
              // Declarations that start a statement, an enum's names, a member's name.
              "    constexpr int x = 128;\n    static_assert(SQ(x) > 0, \"x\");\n",
              "    using x = float;\n    int k;\n", "    enum class Mode { x, y };\n    int k;\n",
              "    struct Params { const float* in; int x; };\n    int k;\n",
              "    __device__ float2 f(float2 v) { return make_float2(SQ(v.x), SQ(v.y)); }\n"
              "    __device__ float4 f(float4 v) { return make_float4(SQ(v.x), SQ(v.w)); }\n"}) {
            CAPTURE(head);
            CHECK(lint_string(std::string("namespace n {\n#define SQ(x) \\\n    ((x) * (x))\n") +
                              head + "}\n")
                      .empty());
        }
        // The lines right after a body run only up to the end of the macro's block, and not
        // into a block that opens after it: code after a file-scope macro or in the next
        // namespace counts.
        CHECK(lint_string("#define SQ(x) \\\n    ((x) * (x))\nnamespace k {\n    int g(int v);\n"
                          "#define CUBE(x) \\\n    ((x) * (x) * (x))\n    int y = CUBE(x);\n}\n")
                  .empty());
        CHECK(lint_string("namespace a {\n#define SQ(x) \\\n    ((x) * (x))\n}\nnamespace b {\n"
                          "    int g(int v);\n#define CUBE(x) \\\n    ((x) * (x) * (x))\n"
                          "    int y = CUBE(x);\n}\n")
                  .empty());
        CHECK(lint_string("namespace n {\n#define LOAD(T, p) \\\n    (*(const T*)(p))\n"
                          "    template <typename T>\n    __device__ T load(const T* p) {\n"
                          "        return LOAD(T, p);\n    }\n}\n")
                  .empty());
        // A call, an assignment or a name under '*' reads the name: still the lost body.
        for (const char* lost : {"    out[2] = f(x);\n", "    g(x) = 2;\n", "    float v(*x)\n",
                                 "    const float w(x);\n",
                                 "    __device__ float x(float v) { return v; }\n"}) {
            CAPTURE(lost);
            f = lint_string(std::string("namespace n {\n#define ST(x) \\\n    out[0] = (x); \\\n"
                                        "    out[1] = (x);\n") +
                            lost + "}\n");
            REQUIRE(f.size() == 1);
            CHECK(f[0].line == 5);
        }
        CHECK(lint_string("    #define AT(i) data[(i)]\n    x = AT(i);\n    y = i;\n").empty());
        CHECK(lint_string("#define ONE \\\n    1\n    int i = ONE;\n").empty());
        CHECK(lint_string("#define UNUSED(x)\n    // x is unused\nint y;\n").empty());
    }

    TEST_CASE("well-formed continuations and comments and CRLF endings are not findings") {
        CHECK(lint_string("#define A(x) \\\n    (x) + \\\n    1\n#define B 2 \\\n  + 3\nint y;\n")
                  .empty());
        CHECK(lint_string("#define A(x) \\\r\n    (x)\r\nint y;\r\n").empty());
        CHECK(lint_string("// a comment ending in a backslash \\   \nint y;\n").empty());
        CHECK(lint_string("/* ascii art \\  \n  \\ */\nint y;\n").empty());
        CHECK(lint_string("#define A 1\n#define B(x) \\\n  x\n").empty());
        // A namespace opened and closed by multi-line macros, on purpose.
        CHECK(lint_string("#define NS_BEGIN \\\n  namespace trt::v1 { \\\n  ABI_BEGIN\n"
                          "#define NS_END \\\n  ABI_END \\\n  } /* trt */\n")
                  .empty());
        CHECK(lint_source("#if defined(__CUDACC_RTC__)\n#else\n#include <cstdio>\n#endif\n").empty());
        const auto f = lint_string("#define A 1\nint x = 2; \\\nint y;\n");
        REQUIRE(f.size() == 1);
        CHECK(f[0].format() ==
              "k.cu:2:1: error: this line ends with '\\' but the #define of A (line 1) "
              "ended on line 1: missing '\\' there; the rest of the body is top-level "
              "code [KJ001]");
        const auto g = lint_string("#if A\n#else\n#elif B\n#else\n#endif\n#endif\n");
        REQUIRE(g.size() == 3);
        CHECK(g[0].message == "#elif after #else");
        CHECK(g[1].message == "#else after #else");
        CHECK(g[2].message == "#endif without #if");
    }

    TEST_CASE("the scanner keeps physical positions across splices and comments") {
        const auto s =
            scan("/* c */ # define X \\\n  1 /* two\nlines */ + 2\nint a;\n  #  if X\n#endif");
        REQUIRE(s.directives.size() == 3);
        CHECK(s.directives[0].name == "define");
        CHECK(s.directives[0].end_line == 3);
        REQUIRE(s.directives[0].args.size() == 4);
        CHECK(s.directives[0].args[1].text == "1");
        CHECK(s.directives[0].args[1].line == 2);
        CHECK(s.directives[0].args[1].column == 3);
        CHECK(s.directives[1].name == "if");
        CHECK(s.directives[1].column == 3);
        CHECK(s.directives[2].end_line == 6);
        CHECK(s.comments.size() == 2);
    }

    TEST_CASE("evaluate expands object-like macros and refuses what is not an integer constant") {
        const MacroTable macros{{"RMS_BLOCK", {"256"}},
                                {"WARPS", {"(", "RMS_BLOCK", "/", "32", ")"}},
                                {"SELF", {"SELF", "+", "1"}}};
        CHECK(evaluate(tokenize("WARPS * 2 + (1 << 3) - 0x10"), macros) == 8);
        CHECK(evaluate(tokenize("RMS_BLOCK >= 256 ? 1 : 0"), macros) == 1);
        CHECK(evaluate(tokenize("256u"), {}) == 256);
        CHECK_FALSE(evaluate(tokenize("SELF"), macros));
        CHECK_FALSE(evaluate(tokenize("1 / 0"), {}));
        CHECK_FALSE(evaluate(tokenize("1.0f"), {}));
        CHECK_FALSE(evaluate(tokenize("UNKNOWN"), {}));
        CHECK_FALSE(evaluate(tokenize("(1"), {}));
    }

    TEST_CASE("nearest suggests the closest name and nothing when none is close") {
        using Names = std::vector<std::string>;
        CHECK(kjit::nearest("RMS_BLCK", {"RMS_BLOCK", "RMS_EPS"}) == Names{"RMS_BLOCK"});
        CHECK(kjit::nearest("BLOCK_ROW", {"BLOCK_COLS", "BLOCK_ROWS"}) == Names{"BLOCK_ROWS"});
        CHECK(kjit::nearest("T_SPLIT", {"MAX_DSTATE"}).empty());
    }

} // TEST_SUITE
