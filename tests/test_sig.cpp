// `kjit sig` and `kjit sig --verify`: exact parameter layouts or an error at the location,
// checked against the PTX NVRTC writes.
#include "tests/lint_support.hpp"

#include "lint/verify.hpp"

#include "tests/doctest.hpp"

namespace {
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit;
using namespace kjit::lint;

const std::filesystem::path kSig = KJIT_SOURCE_DIR "/tests/fixtures/sig";
const std::filesystem::path& kKernels = kjit::test::kKernelSources;

// The lines of `text` that start with `prefix`.
std::size_t count_lines(const std::string& text, const std::string& prefix) {
    std::size_t n = 0;
    for (std::size_t p = 0; p < text.size();) {
        const std::size_t end = text.find('\n', p);
        if (text.compare(p, prefix.size(), prefix) == 0)
            ++n;
        p = end == std::string::npos ? text.size() : end + 1;
    }
    return n;
}

// kjit sig, or nullopt (and a message) where no libclang loads.
std::optional<Run> sig(const std::string& args) {
    if (!kjit::test::libclang())
        return std::nullopt;
    return run_kjit("sig " + args);
}
} // namespace

TEST_SUITE("lint") {

    TEST_CASE("kjit sig lists entry points with parameter types and sizes and launch bounds") {
        const std::string file = (kKernels / "rms_norm.cu").string();
        const auto run = sig(file);
        if (!run)
            return;
        Run r = *run;
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(contains(r.out, file + ":"));
        CHECK(contains(
            r.out, ": rms_norm_f32  __launch_bounds__(RMS_BLOCK=256)  6 parameter(s), 36 bytes"));
        CHECK(contains(r.out, "const bf16 *__restrict"));
        CHECK(contains(r.out, "eps"));
        r = run_kjit("sig --embedded -D RMS_BLOCK=1024");
        CHECK(contains(r.out, "kernel_src/rms_norm.cu:"));
        CHECK(contains(r.out, "__launch_bounds__(RMS_BLOCK=1024)"));
        // A misspelt -D would list the defaults as if it applied: refused.
        r = run_kjit("sig -D RMS_BLOKC=1024 " + file);
        CHECK(r.code == 2);
        CHECK(contains(r.out, "error: define RMS_BLOKC (-D) is never read by the files listed or "
                              "what they include; did you mean RMS_BLOCK?"));
        r = run_kjit("sig --json " + file);
        CHECK(contains(r.out, "\"name\": \"rms_norm_f32\""));
        CHECK(contains(r.out, "\"launch_bounds\": [{\"text\": \"RMS_BLOCK\", \"value\": 256}]"));
        CHECK(contains(r.out, "{\"name\": \"eps\", \"type\": \"float\", \"size\": 4, \"align\": 4, "
                              "\"offset\": 32}"));
        CHECK(run_kjit("sig --libclang /nonexistent/libclang.so.1").code == 2);
    }

    TEST_CASE("sig sizes what NVRTC knows without headers and decays array parameters") {
        const auto run = sig((kSig / "sig_types.cu").string());
        if (!run)
            return;
        INFO(run->out);
        CHECK(run->code == 0);
        const std::string at = (kSig / "sig_types.cu").string() + ":9:28: sig_types  ";
        CHECK(contains(run->out, at + "no __launch_bounds__  11 parameter(s), 256 bytes"));
        for (const char* row : {"   1  count   size_t                  8      8       0",
                                "   2  stride  ptrdiff_t               8      8       8",
                                "   3  tex     cudaTextureObject_t     8      8      16",
                                "   4  surf    cudaSurfaceObject_t     8      8      24",
                                "   5  taps    float *                 8      8      32",
                                "   6  flag    bool                    1      1      40",
                                "   8  quad    float4                 16     16      48",
                                "  10  shape   dim3                   12      4      80",
                                "  11  map     const SigTensorMap    128     64     128"})
            CHECK(contains(run->out, row));
    }

    TEST_CASE("sig lists a header's kernel once at its definition with macro launch bounds") {
        const auto run = sig(kSig.string());
        if (!run)
            return;
        INFO(run->out);
        // Two kernel files include sig_common.cuh; shared_step is declared, then defined.
        CHECK(count_lines(run->out,
                          (kSig / "sig_common.cuh").string() + ":18:41: sig::shared_step") == 1);
        CHECK(contains(run->out, ":18:41: sig::shared_step  __launch_bounds__(SIG_THREADS=128)  2 "
                                 "parameter(s), 40 bytes"));
        CHECK_FALSE(contains(run->out, ":16:17: sig::shared_step"));
        CHECK(count_lines(run->out, (kSig / "sig_common.cuh").string() + ":24:47: sig::widen") ==
              1);
    }

    TEST_CASE("a kernel in a header found through -I is listed at that header's own path") {
        if (!kjit::test::libclang())
            return;
        kjit::test::TempDir dir;
        kjit::test::write_file(dir.path() / "lib" / "ops" / "scale.cuh",
                               "#pragma once\n\ntemplate <int N>\n__global__ void scale_n(float* y) "
                               "{ y[threadIdx.x] *= N; }\n\n"
                               "extern \"C\" __global__ void halve(float* y) { y[0] *= 0.5f; }\n");
        kjit::test::write_file(dir.path() / "src" / "main.cu", "#include <ops/scale.cuh>\n");
        const Run r = run_kjit("sig -I " + (dir.path() / "lib").string() + " " +
                               (dir.path() / "src").string());
        INFO(r.out);
        CHECK(r.code == 0);
        const std::string header = (dir.path() / "lib" / "ops" / "scale.cuh").string();
        CHECK(contains(r.out, header + ":6:28: halve"));
        CHECK(contains(r.out, header + ":4:17: scale_n"));
        CHECK_FALSE(contains(r.out, "main.cu:"));
    }

    TEST_CASE("a type sig cannot resolve is an error at the parameter and never a guessed size") {
        const std::string file = (kSig / "unknown_types" / "sig_unknown.cu").string();
        const auto run = sig(file);
        if (!run)
            return;
        INFO(run->out);
        CHECK(run->code == 1);
        CHECK(contains(run->out, file + ":2:28: sig_unknown  no __launch_bounds__  3 parameter(s), "
                                        "? bytes"));
        CHECK(contains(run->out, "   2  map   const __grid_constant__ CUtensorMap     ?      ?"));
        CHECK(contains(run->out, file + ":2:83: error: the type of parameter 'map' (const "
                                        "__grid_constant__ CUtensorMap) is not known: unknown "
                                        "type name 'CUtensorMap'"));
        CHECK(contains(run->out, file + ":2:95: error: the type of parameter 'b' (int8_t) is not "
                                        "known: unknown type name 'int8_t'"));
        CHECK(contains(run->out, "sig: 1 entry point(s), 2 error(s)"));
        // The JSON carries the same messages, and null where the text shows '?'.
        const Run json = run_kjit("sig --json " + file);
        CHECK(json.code == 1);
        CHECK(contains(json.out, "{\"name\": \"map\", \"type\": \"const __grid_constant__ "
                                 "CUtensorMap\", \"size\": null, \"align\": null, \"offset\": "
                                 "null}"));
        CHECK(contains(json.out, "\"severity\": \"error\", \"message\": \"the type of parameter "
                                 "'map' (const __grid_constant__ CUtensorMap) is not known: "
                                 "unknown type name 'CUtensorMap'\""));
        CHECK_FALSE(contains(json.out, ": -1"));
        CHECK_FALSE(contains(json.out, ": -2"));
        CHECK_FALSE(contains(json.out, ": -3"));
    }

    TEST_CASE("each unit is its own program: one extern \"C\" name in two .cu files is listed twice") {
        kjit::test::TempDir dir;
        const std::string c = "extern \"C\" __global__ void same";
        kjit::test::write_file(dir.path() / "a.cu", c + "(int* x) {}\n");
        kjit::test::write_file(dir.path() / "b.cu", c + "(float* x, int n) {}\n");
        kjit::test::write_file(dir.path() / "decl.cuh", c + "(int* x);\n");
        const auto run = sig(dir.path().string());
        if (!run)
            return;
        INFO(run->out);
        CHECK(contains(run->out, "a.cu:1:28: same  no __launch_bounds__  1 parameter(s), 8 bytes"));
        CHECK(contains(run->out,
                       "b.cu:1:28: same  no __launch_bounds__  2 parameter(s), 12 bytes"));
        CHECK_FALSE(contains(run->out, "decl.cuh"));
        CHECK(contains(run->out, "sig: 2 entry point(s), 0 error(s)"));
    }

    TEST_CASE("a template kernel is listed with a note and with its layout when instantiated") {
        const auto run = sig(kSig.string());
        if (!run)
            return;
        INFO(run->out);
        CHECK(contains(run->out, ":24:47: sig::widen (template)  __launch_bounds__(Width*32)  3 "
                                 "parameter(s), ? bytes"));
        CHECK(contains(run->out, ":24:47: note: widen is a template: its parameter layout depends "
                                 "on the template arguments; list an instantiation with "
                                 "--instantiate 'sig::widen<...>'"));
        const Run inst =
            run_kjit("sig --verify --instantiate 'sig::widen<float, 4>' " + kSig.string());
        INFO(inst.out);
        CHECK(contains(inst.out, ":24:47: sig::widen<float, 4>  __launch_bounds__(Width*32=128)  "
                                 "3 parameter(s), 24 bytes"));
        CHECK(contains(inst.out, "   3  taps  float *           8      8      16"));
        CHECK(contains(inst.out, "verify: 4 of 4 kernel(s) agree with the PTX"));
        const Run none = run_kjit("sig --instantiate 'sig::narrow<int>' " + kSig.string());
        CHECK(none.code == 1);
        CHECK(contains(none.out, "--instantiate: error: 'sig::narrow<int>' names no kernel "
                                 "instantiation in this file: no member named 'narrow' in "
                                 "namespace 'sig'"));
    }

    TEST_CASE("a template's explicit instantiations in its file are listed and verified") {
        kjit::test::TempDir dir;
        kjit::test::write_file(
            dir.path() / "t.cu",
            "template <typename T> __device__ T twice(T x) { return x + x; }\n"
            "template <typename T>\n"
            "__global__ void scale(T* y, T a, int n) { y[threadIdx.x] = twice(a) * n; }\n"
            "template __global__ void scale<float>(float*, float, int);\n"
            "template __global__ void scale<double>(double*, double, int);\n"
            "extern template __global__ void scale<int>(int*, int, int);\n"
            "template __device__ float twice<float>(float);\n"
            "namespace ns { template <int N> __global__ void fill(int* y) { *y = N; } }\n"
            "template\n__global__ void ns::fill<4>(int*);\n"
            "// template __global__ void scale<char>(char*, char, int);\n"
            "struct Foo {};\n#if 0\ntemplate __global__ void scale<Foo>(Foo*, Foo, int);\n"
            "#endif\n"
            "namespace ns { template __global__ void fill<8>(int*); }\n");
        // A header's instantiation is listed from the unit that includes it.
        kjit::test::write_file(dir.path() / "h.cuh",
                               "#pragma once\nnamespace hs {\n"
                               "template <typename T> __global__ void half(T* y) { *y /= 2; }\n"
                               "template __global__ void half<float>(float*);\n}\n");
        kjit::test::write_file(dir.path() / "u.cu",
                               "#include \"h.cuh\"\n"
                               "extern \"C\" __global__ void u(float* y) { *y = 1; }\n");
        const auto run = sig("--verify " + dir.path().string());
        if (!run)
            return;
        INFO(run->out);
        CHECK(run->code == 0);
        CHECK(contains(run->out, "h.cuh:3:39: hs::half<float>  no __launch_bounds__  1 "
                                 "parameter(s), 8 bytes"));
        CHECK(contains(run->out, "t.cu:3:17: scale<float>  no __launch_bounds__  3 parameter(s), "
                                 "16 bytes"));
        CHECK(contains(run->out, "t.cu:3:17: scale<double>  no __launch_bounds__  3 "
                                 "parameter(s), 20 bytes"));
        CHECK(contains(run->out, "t.cu:8:49: ns::fill<4>  no __launch_bounds__  1 parameter(s), "
                                 "8 bytes"));
        // Written inside its namespace: named with it.
        CHECK(contains(run->out, "t.cu:8:49: ns::fill<8>  no __launch_bounds__"));
        // One in a branch the compile skips is no kernel of it (its body would not compile).
        CHECK_FALSE(contains(run->out, "Foo"));
        // An extern template, a __device__ function and a comment are no instantiation here;
        // an instantiated template needs no note asking for one.
        CHECK_FALSE(contains(run->out, "scale<int>"));
        CHECK_FALSE(contains(run->out, "twice"));
        CHECK_FALSE(contains(run->out, "scale<char>"));
        CHECK_FALSE(contains(run->out, "note:"));
        CHECK(contains(run->out, "verify: 6 of 6 kernel(s) agree with the PTX (3 not checked)"));
    }

    TEST_CASE("sig --verify fails a .cu that compiles to no entry point") {
        kjit::test::TempDir dir;
        // The #define comes after the #if that reads it: NVRTC compiles the file to nothing.
        kjit::test::write_file(dir.path() / "later.cu",
                               "#if HAVE_K\n__global__ void k(float* y) { *y = 1; }\n#endif\n"
                               "#define HAVE_K 1\n");
        kjit::test::write_file(dir.path() / "h.cuh", "__global__ void hk(float* y) { *y = 1; }\n");
        // Its kernel is listed from the header, and its PTX has the entry.
        kjit::test::write_file(dir.path() / "inc.cu", "#include \"h.cuh\"\n");
        const auto empty = sig("--verify " + (dir.path() / "later.cu").string());
        if (!empty)
            return;
        INFO(empty->out);
        CHECK(empty->code == 1);
        CHECK(contains(empty->out, "later.cu: compiles to no entry point (its kernels are behind "
                                   "a false #if, or templates nothing instantiates)"));
        CHECK(contains(empty->out, "1 translation unit(s) compiled, 0 did not, 1 compiled to no "
                                   "entry point"));
        const auto header = sig("--verify " + (dir.path() / "inc.cu").string() + " " +
                                (dir.path() / "h.cuh").string());
        INFO(header->out);
        CHECK(header->code == 0);
        CHECK(contains(header->out, "verify: 1 of 1 kernel(s) agree with the PTX"));
        CHECK_FALSE(contains(header->out, "no entry point"));
    }

    TEST_CASE("sig --verify agrees with the PTX on every fixture and shipped kernel") {
        if (!kjit::test::libclang())
            return;
        const std::string fixtures = KJIT_SOURCE_DIR "/tests/fixtures";
        for (const std::string& dirs :
             {kKernels.string(), fixtures + "/sig", fixtures + "/lint_clean", fixtures + "/lint",
              fixtures + "/contract", std::string("--embedded")}) {
            const Run r = run_kjit("sig --verify " + dirs);
            INFO(dirs << "\n" << r.out);
            const auto at = r.out.find("verify: ");
            REQUIRE(at != std::string::npos);
            const std::string summary = r.out.substr(at);
            const long agreed = std::stol(summary.substr(8));
            const long checked = std::stol(summary.substr(summary.find(" of ") + 4));
            CHECK(agreed == checked);
            CHECK(checked > 0);
            CHECK_FALSE(contains(r.out, "the PTX disagrees"));
        }
        // A file NVRTC does not compile leaves its kernels unverified: an error and exit 1,
        // though every kernel it could check agreed.
        const Run broken = run_kjit("sig --verify " + fixtures + "/lint");
        INFO(broken.out);
        CHECK(broken.code == 1);
        CHECK(contains(broken.out, "kjit sig: error: " + fixtures +
                                       "/lint/kj005_host_header.cu: NVRTC does not compile it: "));
        const Run shipped = run_kjit("sig --verify " + kKernels.string());
        CHECK(shipped.code == 0);
        CHECK(contains(shipped.out, "verify: 9 of 9 kernel(s) agree with the PTX (0 not checked); "
                                    "3 translation unit(s) compiled, 0 did not"));
    }

    TEST_CASE("the PTX reader lays out .param lists and names mangled symbols") {
        const std::string ptx = ".visible .entry k(\n\t.param .u64 .ptr .global .align 1 k_param_0,\n"
                                "\t.param .u8 k_param_1,\n\t.param .align 16 .b8 k_param_2[32],\n"
                                "\t.param .f32 k_param_3\n)\n{\n ret;\n}\n"
                                ".weak .entry _ZN2ns4stepIfLi4EEEvPT_i()\n{\n}\n";
        const auto entries = ptx_entries(ptx);
        REQUIRE(entries.size() == 2);
        const auto& k = entries.at("k");
        REQUIRE(k.size() == 4);
        CHECK(k[0].size == 8);
        CHECK(k[1].offset == 8);
        CHECK(k[2].align == 16);
        CHECK(k[2].size == 32);
        CHECK(k[2].offset == 16);
        CHECK(k[3].offset == 48);
        CHECK(entries.at("_ZN2ns4stepIfLi4EEEvPT_i").empty());
        CHECK(symbol_name("_ZN2ns4stepIfLi4EEEvPT_i") == "ns::step");
        CHECK(symbol_name("_Z5scalePfi") == "scale");
        CHECK(symbol_name("_ZN12_GLOBAL__N_11kEv") == "(anonymous namespace)::k");
        CHECK(symbol_name("rms_norm_f32") == "rms_norm_f32");
    }

} // TEST_SUITE
