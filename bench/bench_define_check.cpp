// The cost Engine::prepare pays at start-up to check that every injected define is read by the
// source (jit/define_use.hpp): per kernel of kjit's tree, the median and p99 of the text check
// over its source and includes, with the production defines of kernel_src/model.toml.
// Usage: bench_define_check [KERNEL_DIR] [REPS]   (default: the embedded kernels, 2000 reps)
#include "jit/define_use.hpp"
#include "jit/shape_file.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace kjit;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
    const SourceSet sources =
        argc > 1 && std::string(argv[1]) != "-" ? SourceSet::from_directory(argv[1])
                                                : SourceSet::embedded();
    const int reps = argc > 2 ? std::atoi(argv[2]) : 2000;
    std::printf("%-12s %8s %10s %10s %8s\n", "kernel", "bytes", "median us", "p99 us", "defines");
    for (const SourceFile* k : sources.kernels()) {
        // Every macro the kernel tests as if injected: the check's worst case for this kernel.
        std::map<std::string, std::string> defines;
        for (std::size_t at = k->text.find("#ifndef "); at != std::string::npos;
             at = k->text.find("#ifndef ", at + 1)) {
            const std::size_t begin = at + 8;
            const std::size_t end = k->text.find_first_of(" \n", begin);
            defines[k->text.substr(begin, end - begin)] = "1";
        }
        std::size_t bytes = k->text.size();
        for (const SourceFile* f : sources.includable(*k))
            bytes += f == k ? 0 : f->text.size();
        std::vector<double> us;
        for (int i = 0; i < reps; ++i) {
            const auto start = Clock::now();
            const auto found = unread_define_diagnostics(sources, *k, k->kernel_name(), {}, defines,
                                                       Severity::error);
            us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
            if (!found.empty()) {
                std::fprintf(stderr, "%s: %s\n", k->path.c_str(), found.front().message.c_str());
                return 1;
            }
        }
        std::sort(us.begin(), us.end());
        std::printf("%-12s %8zu %10.1f %10.1f %8zu\n", k->kernel_name().c_str(), bytes,
                    us[us.size() / 2], us[us.size() * 99 / 100], defines.size());
    }
    return 0;
}
