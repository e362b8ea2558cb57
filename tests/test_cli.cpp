#include "tests/support.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <fstream>
#include <sstream>

namespace {
struct Run {
    int code;
    std::string out; // stdout and stderr together
};

Run run_kjit(const std::string& args, const std::string& env = {}) {
    const std::string cmd = env + (env.empty() ? "" : " ") + KJIT_BINARY + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    std::array<char, 4096> buf{};
    while (std::size_t n = fread(buf.data(), 1, buf.size(), p))
        out.append(buf.data(), n);
    const int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}
} // namespace

TEST_SUITE("cli") {

TEST_CASE("kjit audit compiles every embedded kernel for sm_90 and exits 0") {
    const Run r = run_kjit("audit");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "  ok    rms_norm         sm_90"));
    CHECK(contains(r.out, "audit: 1 compiled, 0 failed"));
}

TEST_CASE("a kernel with a syntax error makes audit exit 1 with the kernel's own file:line") {
    kjit::test::TempDir dir;
    std::filesystem::copy(KJIT_SOURCE_DIR "/kernel_src", dir.path());
    // Break line 20 of rms_norm.cu: drop the semicolon of the `float sum` declaration.
    std::ifstream in(dir.path() / "rms_norm.cu");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    in.close();
    int broken = 0;
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (contains(lines[i], "float sum = 0.0f;")) {
            lines[i].pop_back();
            broken = static_cast<int>(i) + 2; // NVRTC stops at the next line
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
                              ":9: error: expected a \";\""));
    CHECK(contains(r.out, "audit: 0 compiled, 1 failed"));
}

TEST_CASE("usage errors exit 2 with a message naming the cause") {
    Run r = run_kjit("frobnicate");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "unknown verb 'frobnicate'"));
    r = run_kjit("compile rms_nrom");
    CHECK(r.code == 2);
    CHECK(contains(r.out, "unknown kernel 'rms_nrom' (known kernels: rms_norm)"));
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
}

TEST_CASE("no driver is reported as such and not as a crash") {
    const Run r = run_kjit("info", "KJIT_DRIVER_LIBRARY=/nonexistent/libcuda.so.1");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(contains(r.out, "no CUDA driver: cannot load /nonexistent/libcuda.so.1"));
    CHECK(contains(r.out, "kernel_src/rms_norm.cu"));
    const Run c = run_kjit("check", "KJIT_DRIVER_LIBRARY=/nonexistent/libcuda.so.1");
    CHECK(c.code == 0);
    CHECK(contains(c.out, "launch checks skipped: no CUDA driver"));
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
