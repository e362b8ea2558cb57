#include "tests/support.hpp"

#include "tests/doctest.hpp"

#include <sys/wait.h>

#include <array>
#include <fstream>
#include <regex>
#include <sstream>

namespace {
using kjit::test::contains;
using kjit::test::Run;
using kjit::test::run_kjit;
using kjit::test::run_kjit_in;
} // namespace

TEST_SUITE("cli") {

TEST_CASE("kjit audit compiles every embedded kernel for sm_90 and exits 0") {
    const Run r = run_kjit_in(KJIT_SOURCE_DIR, "audit");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "  ok    rms_norm         sm_90"));
    CHECK(contains(r.out, "(defaults)"));
    CHECK(contains(r.out, "lint: "));
    CHECK(contains(r.out, "fresh: up to date"));
    // Each kernel with its defaults and with every production define set of kernel_src/*.toml.
    CHECK(contains(r.out, " compiled, 0 failed; lint: 0 finding(s); fresh: up to date"));
}

TEST_CASE("a kernel with a syntax error makes audit exit 1 with the kernel's own file:line") {
    kjit::test::TempDir dir;
    std::filesystem::copy(KJIT_SOURCE_DIR "/kernel_src", dir.path());
    // Drop the semicolon that ends the scale's declaration in rms_norm.cu: NVRTC reports the
    // missing ';' at the first token of the next line.
    std::ifstream in(dir.path() / "rms_norm.cu");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    in.close();
    int broken = 0, column = 0;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i)
        if (contains(lines[i], "const float inv = ")) {
            lines[i].pop_back();
            broken = static_cast<int>(i) + 2;
            column = static_cast<int>(lines[i + 1].find_first_not_of(' ')) + 1;
            break;
        }
    REQUIRE(broken > 0);
    std::ofstream out(dir.path() / "rms_norm.cu");
    for (const auto& l : lines)
        out << l << '\n';
    out.close();
    const Run r = run_kjit("audit --src " + dir.path().string());
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(contains(r.out, "FAIL  rms_norm"));
    CHECK(contains(r.out, (dir.path() / "rms_norm.cu").string() + ":" + std::to_string(broken) +
                              ":" + std::to_string(column) + ": error: expected a \";\""));
    CHECK(std::regex_search(r.out, std::regex(R"(audit: \d+ compiled, [1-9]\d* failed)")));
}

TEST_CASE("usage errors exit 2 with a message naming the cause") {
    Run r = run_kjit("frobnicate");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "unknown verb 'frobnicate'"));
    r = run_kjit("compile rms_nrom");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "unknown kernel 'rms_nrom' (known kernels: conv1d, delta_rule, "
                          "rms_norm); did you mean rms_norm?"));
    r = run_kjit("compile");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "kernel is required"));
    r = run_kjit("compile rms_norm -D 9X=1");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "bad define '9X=1'"));
    r = run_kjit("audit --src /nonexistent/kernels");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "/nonexistent/kernels: error: kernel source directory does not exist"));
    r = run_kjit("");
    CHECK(r.code == 2);
}

TEST_CASE("kjit compile reports the compile and writes CUBIN and PTX") {
    kjit::test::TempDir dir;
    const auto cubin = dir.path() / "k.cubin", ptx = dir.path() / "k.ptx";
    const Run r = run_kjit("compile rms_norm -D RMS_BLOCK=512 -o " + cubin.string() + " --ptx " +
                       ptx.string());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kernel_src/rms_norm.cu: compiled for sm_90"));
    CHECK(contains(r.out, "defines: RMS_BLOCK=512"));
    CHECK(std::filesystem::file_size(cubin) > 0);
    std::ifstream p(ptx);
    std::stringstream s;
    s << p.rdbuf();
    CHECK(contains(s.str(), ".maxntid 512, 1, 1"));
    // The report is on stdout, unless the CUBIN is: then stdout holds the CUBIN alone.
    const auto stdout_of = [](const std::string& args) {
        return kjit::test::run_shell(std::string("(") + KJIT_BINARY + " " + args + " 2>/dev/null)");
    };
    Run only = stdout_of("compile rms_norm -D RMS_BLOCK=512");
    CHECK(contains(only.out, "kernel_src/rms_norm.cu: "));
    only = stdout_of("compile rms_norm -D RMS_BLOCK=512 -o -");
    CHECK(only.out.starts_with("\x7f"
                               "ELF"));
    CHECK_FALSE(contains(only.out, "kernel_src/rms_norm.cu: "));
}

TEST_CASE("no driver is reported as such and not as a crash") {
    const Run r = run_kjit("info", "KJIT_DRIVER_LIBRARY=/nonexistent/libcuda.so.1");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "no CUDA driver: cannot load /nonexistent/libcuda.so.1"));
    CHECK(contains(r.out, "kernel_src/rms_norm.cu"));
    const Run c = run_kjit("check", "KJIT_DRIVER_LIBRARY=/nonexistent/libcuda.so.1");
    CHECK(c.code == 0);
    CHECK(contains(c.out, "launches skipped: no CUDA driver"));
}

TEST_CASE("a driver without a device is reported as no CUDA device") {
    const std::string env = std::string("KJIT_DRIVER_LIBRARY=") + KJIT_STUB_DRIVER;
    Run r = run_kjit("info", env);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "no CUDA device: the driver (13.0) reports no device"));
    r = run_kjit("bench rms_norm", env);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "no CUDA device: the driver (13.0) reports no device"));
    r = run_kjit("check", env);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "launches skipped: no CUDA device"));
}

TEST_CASE("kjit specialize compiles a shape file then serves it from the disk cache") {
    kjit::test::TempDir dir;
    const auto shape = dir.path() / "shape.toml";
    std::ofstream(shape) << "[shape]\nd_model = 7168\nblock = 512\n\n"
                            "[[kernel]]\nname = \"norm_wide\"\nsource = \"rms_norm\"\n"
                            "defines = { RMS_BLOCK = \"${block}\" }\n\n"
                            "[[kernel]]\nname = \"rms_norm\"\ndefines = { RMS_BLOCK = 128 }\n";
    const std::string env = "KJIT_DRIVER_LIBRARY=/nonexistent KJIT_CACHE_DIR=" +
                            (dir.path() / "cache").string();
    Run r = run_kjit("specialize " + shape.string(), env);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "2 kernel(s) for sm_90"));
    CHECK(contains(r.out, "not loaded"));
    CHECK(contains(r.out, "norm_wide                miss"));
    CHECK(contains(r.out, "RMS_BLOCK=512"));
    CHECK(contains(r.out, "specialize: 2 prepared, 0 failed"));
    r = run_kjit("specialize " + shape.string(), env);
    CHECK(contains(r.out, "norm_wide                hit"));
    CHECK(contains(r.out, "rms_norm                 hit"));
    r = run_kjit("specialize --no-cache " + shape.string(), env);
    CHECK(contains(r.out, "rms_norm                 miss"));
}

TEST_CASE("a broken shape file is reported at file:line:col with exit 2") {
    kjit::test::TempDir dir;
    const auto check = [&](const std::string& text, const std::string& want) {
        const auto shape = dir.path() / "bad.toml";
        std::ofstream(shape) << text;
        const Run r = run_kjit("specialize " + shape.string(), "KJIT_DRIVER_LIBRARY=/nonexistent");
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(contains(r.out, shape.string() + ":" + want));
    };
    check("[shape]\nd_model = 7168\n[kernal]\n",
          "3:2: error: unknown key 'kernal' in the shape file; did you mean 'kernel'?");
    check("[shape]\nd_model = 7168\n[zzzz]\n",
          "3:2: error: unknown key 'zzzz' in the shape file (known: shape, kernel, tuned)");
    check("[shape]\nd_model = \"big\"\n", "2:11: error: shape entry 'd_model' must be an integer");
    check("[shape]\nd_model = 7168\n[[kernel]]\nname = \"rms_norm\"\nsorce = \"x\"\n",
          "5:1: error: unknown key 'sorce' in [[kernel]]; did you mean 'source'?");
    check("[shape\n", "1:7: error:");
    check("[[kernel]]\nname = \"x\"\ndefines = { 9A = 1 }\n", "3:18: error: bad define '9A=1'");
    const auto shape = dir.path() / "ref.toml";
    std::ofstream(shape) << "[[kernel]]\nname = \"rms_norm\"\ndefines = { RMS_BLOCK = \"${nope}\" }\n";
    const Run r = run_kjit("specialize " + shape.string(), "KJIT_DRIVER_LIBRARY=/nonexistent");
    CHECK(r.code == 2);
    CHECK(contains(r.out, shape.string() + ":3:25: error: kernel 'rms_norm': define RMS_BLOCK "
                                           "names shape entry 'nope', which the shape lacks"));
}

TEST_CASE("kjit cache stats and ls and why and clear describe the cache") {
    kjit::test::TempDir dir;
    // A cache not created yet: the verbs that read it say so and leave it uncreated.
    const std::string none = "KJIT_CACHE_DIR=" + (dir.path() / "none" / "yet").string();
    for (const char* verb : {"cache stats", "cache ls", "cache clear", "cache why rms_norm"}) {
        const Run r = run_kjit(verb, none);
        INFO(verb << ": " << r.out);
        CHECK(r.code == 0);
        CHECK_FALSE(contains(r.out, "warning"));
    }
    CHECK(contains(run_kjit("cache stats", none).out, "state      none yet: the first compile "
                                                      "creates it"));
    CHECK_FALSE(std::filesystem::exists(dir.path() / "none"));
    const std::string env = "KJIT_CACHE_DIR=" + dir.path().string();
    CHECK(run_kjit("compile rms_norm -D RMS_BLOCK=256", env).code == 0);
    Run r = run_kjit("cache stats", env);
    CHECK(contains(r.out, "entries    1"));
    r = run_kjit("cache ls", env);
    CHECK(contains(r.out, "rms_norm         sm_90"));
    CHECK(contains(r.out, "RMS_BLOCK=256"));
    r = run_kjit("cache why rms_norm -D RMS_BLOCK=256", env);
    CHECK(contains(r.out, "hit: an entry with this key"));
    r = run_kjit("cache why rms_norm -D RMS_BLOCK=512", env);
    INFO(r.out);
    CHECK(contains(r.out, "miss: nearest entry"));
    CHECK(contains(r.out, "defines  DIFFERENT"));
    CHECK(contains(r.out, "source   same"));
    // A define the kernel never reads is refused, as kjit compile refuses it.
    r = run_kjit("cache why rms_norm -D RMS_BLOKC=256", env);
    CHECK(r.code == 2);
    CHECK(contains(r.out, "define RMS_BLOKC (-D) is never read by"));
    r = run_kjit("cache why rms_norm -D RMS_BLOCK=256 --arch sm_90a", env);
    CHECK(contains(r.out, "arch     DIFFERENT"));
    CHECK(contains(r.out, "defines  same"));
    r = run_kjit("compile rms_norm -D RMS_BLOCK=256", env);
    CHECK(contains(r.out, "cached, compiled"));
    r = run_kjit("cache clear", env);
    CHECK(contains(r.out, "removed 1 entries"));
    r = run_kjit_in(KJIT_SOURCE_DIR, "audit --no-cache", env);
    CHECK(r.code == 0);
    CHECK(contains(run_kjit("cache stats", env).out, "entries    0"));
    CHECK(run_kjit("cache", env).code == 2);
}

TEST_CASE("kjit fresh names stale and new and missing sources of this kjit and of a binary") {
    kjit::test::TempDir dir;
    const auto src = dir.path() / "kernel_src";
    std::filesystem::copy(KJIT_SOURCE_DIR "/kernel_src", src);
    Run r = run_kjit("fresh --src " + src.string());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit fresh: this kjit: "));
    CHECK(contains(r.out, "fresh: up to date"));
    // The same comparison from the manifest in the binary's bytes.
    r = run_kjit("fresh --src " + src.string() + " --binary " + KJIT_BINARY);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "kjit fresh: " + std::string(KJIT_BINARY) + ": "));
    CHECK(contains(r.out, "fresh: up to date"));
    std::ofstream(src / "rms_norm.cu", std::ios::app) << "// edited\n";
    std::ofstream(src / "scan.cu") << "// new kernel\n";
    std::filesystem::remove(src / "common.cuh");
    for (const std::string& binary : {std::string(), " --binary " + std::string(KJIT_BINARY)}) {
        r = run_kjit("fresh --src " + src.string() + binary);
        CHECK(r.code == 1);
        CHECK(contains(r.out, "stale    " + (src / "rms_norm.cu").string()));
        CHECK(contains(r.out, "new      " + (src / "scan.cu").string()));
        CHECK(contains(r.out, "missing  kernel_src/common.cuh"));
        CHECK(contains(r.out, "fresh: 3 stale"));
    }
    // A user's tree that shares no file with this kjit's own kernels is not compared with
    // them (every file would read "new", every kernel of kjit's "missing"): exit 2, not 1.
    const auto user = dir.path() / "user";
    std::filesystem::create_directories(user);
    std::ofstream(user / "saxpy.cu") << "extern \"C\" __global__ void saxpy(float* x) {}\n";
    std::ofstream(user / "common.cuh") << "#pragma once\n"; // a header's name is anyone's
    r = run_kjit("fresh --src " + user.string());
    CHECK(r.code == 2);
    CHECK(contains(r.out, "error: kjit fresh: this kjit embeds no copy of any kernel of " +
                              user.string() + " (its embedded kernels are kjit's own): name "
                              "the binaries to compare with the sources, --binary APP"));
    CHECK(!contains(r.out, "rebuild"));
    // A program that embeds no kernel tree has nothing to compare.
    r = run_kjit("fresh --src " + src.string() + " --binary /bin/sh");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "/bin/sh: error: the binary embeds no kernel sources"));
}

} // TEST_SUITE

TEST_SUITE("gpu") {

TEST_CASE("kjit check launches every default case and all pass") {
    KJIT_REQUIRE_DEVICE();
    const Run r = run_kjit("check");
    MESSAGE(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "check: 0 failed"));
}

} // TEST_SUITE
