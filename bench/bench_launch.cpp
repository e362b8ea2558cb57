// Launch-cost benchmarks: host cost of a checked kjit launch against a raw cuLaunchKernel of
// the same function (A B B A, per-rep numbers, ratio), and the GPU time per kernel of 100
// launches on a stream against the same 100 captured in a CUDA graph.
// Usage: bench_launch [--pairs 3] [--batch 500] [--batches 200]
#include "bench/bench_support.hpp"
#include "runtime/buffer.hpp"
#include "runtime/context.hpp"
#include "runtime/launch.hpp"
#include "runtime/module.hpp"
#include "runtime/stream.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace kjit;
using kjit::bench::median;
using kjit::bench::spread;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kSource = R"(extern "C" __global__ void empty_k(int n, const float* p) {
    if (n < 0 && p) asm volatile("trap;");
}
)";

} // namespace

int main(int argc, char** argv) {
    int pairs = 3, batch = 500, batches = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        (a == "--pairs" ? pairs : a == "--batch" ? batch : batches) = std::atoi(argv[i + 1]);
    }
    std::string reason;
    if (!device_available(&reason)) {
        std::printf("bench_launch: %s\n", reason.c_str());
        return 2;
    }
    const Context ctx(Device::get(0));
    const Module m = bench::load_source(ctx, "empty", kSource);
    const Function f = m.function("empty_k");
    DeviceBuffer buf(1024);
    const CUdeviceptr p = buf.ptr();
    const int n = 1;
    Stream s;
    const LaunchConfig c{{1, 1, 1}, {32, 1, 1}, 0, s.handle()};
    std::printf("bench_launch on %s: empty kernel, 2 parameters, batches of %d launches then a "
                "sync (not timed), %d batches per arm, %d ABBA pairs\n",
                ctx.device().name().c_str(), batch, batches, pairs);

    // Host cost per launch, in us: the median over batches.
    const auto arm = [&](bool checked) {
        std::vector<double> us;
        void* params[] = {const_cast<int*>(&n), const_cast<CUdeviceptr*>(&p)};
        for (int b = 0; b < batches; ++b) {
            const auto t = Clock::now();
            if (checked)
                for (int i = 0; i < batch; ++i)
                    f.launch(c, n, p);
            else
                for (int i = 0; i < batch; ++i)
                    check(driver().cuLaunchKernel(f.handle(), 1, 1, 1, 32, 1, 1, 0, s.handle(),
                                                  params, nullptr),
                          "cuLaunchKernel");
            us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count() /
                         batch);
            s.synchronize();
        }
        return median(us);
    };
    arm(true); // warm-up of both paths
    arm(false);
    std::vector<double> a_reps, b_reps, ratios;
    for (int pair = 0; pair < pairs; ++pair) {
        const double a1 = arm(true), b1 = arm(false), b2 = arm(false), a2 = arm(true);
        a_reps.insert(a_reps.end(), {a1, a2});
        b_reps.insert(b_reps.end(), {b1, b2});
        ratios.push_back((a1 + a2) / (b1 + b2));
        std::printf("  pair %d: kjit %.3f %.3f us   raw %.3f %.3f us   ratio %.3f\n", pair, a1,
                    a2, b1, b2, ratios.back());
    }
    std::printf("host cost per launch: kjit checked %.3f us, raw cuLaunchKernel %.3f us -> "
                "ratio %.3f (spread %.3f; target <= 1.03)\n",
                median(a_reps), median(b_reps), median(ratios), spread(ratios));
    std::printf("KJIT_US %.4f\n", median(a_reps));
    std::printf("RAW_US %.4f\n", median(b_reps));

    // GPU time per kernel: 100 stream launches against one graph of the same 100.
    Event e0, e1;
    const auto gpu_ms = [&](const std::function<void()>& body) {
        std::vector<double> v;
        for (int rep = 0; rep < 20; ++rep) {
            e0.record(s.handle());
            body();
            e1.record(s.handle());
            e1.synchronize();
            v.push_back(Event::elapsed_ms(e0, e1));
        }
        return median(v);
    };
    const double stream_ms = gpu_ms([&] {
        for (int i = 0; i < 100; ++i)
            f.launch(c, n, p);
    });
    check(driver().cuStreamBeginCapture(s.handle(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
    for (int i = 0; i < 100; ++i)
        f.launch(c, n, p);
    CUgraph graph = nullptr;
    check(driver().cuStreamEndCapture(s.handle(), &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    check(driver().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
    const double graph_ms = gpu_ms([&] {
        check(driver().cuGraphLaunch(exec, s.handle()), "cuGraphLaunch");
    });
    std::printf("GPU time per kernel: 100 stream launches %.2f us each, one graph of 100 %.2f us "
                "each -> graph %.1fx cheaper (medians of 20)\n",
                stream_ms * 10, graph_ms * 10, stream_ms / graph_ms);
    driver().cuGraphExecDestroy(exec);
    driver().cuGraphDestroy(graph);
    return 0;
}
