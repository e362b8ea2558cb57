// Cold NVRTC compiles of a kernel that includes <cuda_bf16.h> and CUB against the same kernel
// in kjit's style (no toolkit header), and what NVRTC's automatic precompiled header (-pch)
// does to the first and later compiles in one process. Every compile is a distinct program (a
// salt kernel appended), so NVRTC's own cache does not answer. Prints medians of wall and CPU
// time (CPU time is what a loaded machine does not distort).
//
//   build/bench/bench_headers [runs]   (run from the repository root; default 7 runs)

#include "jit/compiler.hpp"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace kjit;

namespace {

double cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Timing {
    double wall_ms, cpu_ms;
};

/// One compile of `kernel` from tests/fixtures/user with a salt kernel appended.
Timing compile_once(const std::string& kernel, const CompileOptions& o, int salt) {
    static int serial = 0;
    SourceSet set = SourceSet::from_directory("tests/fixtures/user");
    SourceFile file = set.kernel(kernel);
    file.text += "\nextern \"C\" __global__ void salt_" + std::to_string(salt) + "_" +
                 std::to_string(serial++) + "(int* p) { *p = " + std::to_string(salt) + "; }\n";
    file.hash = hash128(file.text);
    SourceSet salted;
    salted.add(file);
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cpu_ms();
    (void)compile(salted, kernel, o);
    const double c1 = cpu_ms();
    return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count(),
            c1 - c0};
}

void report(const char* what, const std::vector<Timing>& t) {
    std::vector<double> wall, cpu;
    for (const Timing& x : t) {
        wall.push_back(x.wall_ms);
        cpu.push_back(x.cpu_ms);
    }
    std::printf("%-44s n=%zu  wall median %8.1f ms  cpu median %8.1f ms\n", what, t.size(),
                median(wall), median(cpu));
}

} // namespace

int main(int argc, char** argv) {
    const int runs = argc > 1 ? std::atoi(argv[1]) : 7;
    const int salt = static_cast<int>(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
    CompileOptions plain;
    plain.toolkit_headers = true;
    std::vector<Timing> kjit_style, cub, cub_pch_later;
    for (int i = 0; i < runs; ++i) {
        kjit_style.push_back(compile_once("row_sum_plain", plain, salt + i));
        cub.push_back(compile_once("row_sum", plain, salt + i));
    }
    report("row_sum_plain (kjit-style headers)", kjit_style);
    report("row_sum (<cuda_bf16.h> + CUB)", cub);
    // -pch: the first compile of a process creates the header image (each sample in a child
    // process of its own, which has none yet), later ones in the same process load it.
    CompileOptions pch;
    pch.extra = {"-pch"};
    std::vector<Timing> first;
    for (int i = 0; i < runs; ++i) {
        int fds[2];
        if (::pipe(fds) != 0)
            return 1;
        const pid_t child = ::fork();
        if (child == 0) {
            const Timing t = compile_once("row_sum", pch, salt + 1000 + i);
            (void)!::write(fds[1], &t, sizeof t);
            std::_Exit(0);
        }
        Timing t{};
        (void)!::read(fds[0], &t, sizeof t);
        ::close(fds[0]);
        ::close(fds[1]);
        ::waitpid(child, nullptr, 0);
        first.push_back(t);
    }
    for (int i = 0; i < runs + 1; ++i)
        cub_pch_later.push_back(compile_once("row_sum", pch, salt + 2000 + i));
    cub_pch_later.erase(cub_pch_later.begin()); // the one that created the image
    report("row_sum -pch, first compile of a process", first);
    report("row_sum -pch, later compiles in that process", cub_pch_later);
    return 0;
}
