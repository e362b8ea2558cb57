// Lint time: `kjit lint` over a kernel tree (kernel_src by default), with the text rules only
// and with libclang, each timed over several runs (the first, cold, reported apart). Timing
// belongs here, not in the tests: a sanitizer build or a loaded CI machine makes any bound in
// a test flaky.
// Usage: bench_lint [--dir DIR] [--runs N] [--libclang PATH]
#include "lint/lint.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace kjit;
using Clock = std::chrono::steady_clock;

namespace {

struct Timing {
    double first_ms = 0;
    std::vector<double> rest_ms;
    std::size_t files = 0, findings = 0;
};

Timing time_lint(const std::filesystem::path& dir, const lint::Libclang* clang, int runs) {
    Timing t;
    for (int r = 0; r < runs; ++r) {
        const auto start = Clock::now();
        // The whole of what `kjit lint` does: read the tree, its shape files, lint.
        const SourceSet set = SourceSet::from_directory(dir);
        const lint::LintReport report =
            lint::lint({&set, {}, lint::find_injections(dir), clang, "not loaded"});
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (r == 0)
            t.first_ms = ms;
        else
            t.rest_ms.push_back(ms);
        t.files = report.files;
        t.findings = report.findings.size();
    }
    return t;
}

void print(const char* what, const Timing& t) {
    std::vector<double> v = t.rest_ms;
    std::sort(v.begin(), v.end());
    if (v.empty()) {
        std::printf("  %-22s %zu files, %zu findings: first %.1f ms\n", what, t.files, t.findings,
                    t.first_ms);
        return;
    }
    std::printf("  %-22s %zu files, %zu findings: first %.1f ms, then median %.1f ms "
                "(min %.1f, max %.1f) over %zu runs\n",
                what, t.files, t.findings, t.first_ms, v[v.size() / 2], v.front(), v.back(),
                v.size());
}

} // namespace

int main(int argc, char** argv) {
    std::filesystem::path dir = KJIT_SOURCE_DIR "/kernel_src";
    int runs = 10;
    std::string libclang_path;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string opt = argv[i];
        if (opt == "--dir")
            dir = argv[i + 1];
        else if (opt == "--runs")
            runs = std::max(1, std::atoi(argv[i + 1]));
        else if (opt == "--libclang")
            libclang_path = argv[i + 1];
        else {
            std::fprintf(stderr, "usage: bench_lint [--dir DIR] [--runs N] [--libclang PATH]\n");
            return 2;
        }
    }
    try {
        std::printf("bench_lint %s, %d runs each\n", dir.c_str(), runs);
        print("text rules only", time_lint(dir, nullptr, runs));
        std::string why_not;
        const auto clang = lint::Libclang::open(libclang_path, &why_not);
        if (clang)
            print("with libclang", time_lint(dir, clang.get(), runs));
        else
            std::printf("  with libclang: skipped (%s)\n", why_not.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_lint: error: %s\n", e.what());
        return 2;
    }
    return 0;
}
