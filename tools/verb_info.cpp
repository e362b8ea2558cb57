#include "tools/verbs.hpp"

#include "jit/compiler.hpp"
#include "runtime/context.hpp"

#include <cstdio>

namespace kjit::cli {

namespace {
int run_info() {
    const int nv = nvrtc_version();
    std::printf("NVRTC      %d.%d\n", nv / 1000, nv % 1000 / 10);
    const SourceSet set = SourceSet::embedded();
    std::printf("embedded   %zu kernel(s), %zu header(s)\n", set.kernels().size(),
                set.headers().size());
    for (const auto& f : set.files())
        std::printf("           %-28s %s\n", f.path.c_str(), f.hash.hex().substr(0, 12).c_str());
    std::string reason;
    if (!device_available(&reason)) {
        std::printf("driver     %s\n", reason.c_str());
        return kOk;
    }
    const int v = driver().version;
    std::printf("driver     CUDA %d.%d\n", v / 1000, v % 1000 / 10);
    for (int i = 0; i < Device::count(); ++i) {
        const Device d = Device::get(i);
        std::printf("device %d   %s, %s, %d SMs, %.1f GiB\n", i, d.name().c_str(),
                    d.arch().c_str(), d.sm_count(), d.total_memory() / double(1 << 30));
    }
    return kOk;
}
} // namespace

Action add_info(CLI::App& app) {
    app.add_subcommand("info", "NVRTC, driver, devices and embedded kernels");
    return [] { return run_info(); };
}

} // namespace kjit::cli
