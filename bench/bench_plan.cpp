// Launch plans on the decode chain (bench/decode_chain.hpp): GPU time per decode step of
// stream launches, stream launches with PDL, a plan (one graph) without and with programmatic
// edges, in ABBA order; each kernel timed alone in a graph (64 copies of it, per copy); the
// host cost of updating every step's arguments and of one step-block copy (three ways).
// Usage: bench_plan [--reps 200] [--pairs 5] [--kernels 64] (repeatable: 8 16 32 64 by default)
#include "bench/decode_chain.hpp"
#include "bench/bench_support.hpp"
#include "runtime/context.hpp"
#include "runtime/graph.hpp"
#include "runtime/stream.hpp"

#include <algorithm>
#include <array>
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

/// GPU time of one `body`, in us: events around `reps` runs of it, divided.
double gpu_us(const Stream& s, int reps, const std::function<void()>& body) {
    Event e0, e1;
    e0.record(s.handle());
    for (int i = 0; i < reps; ++i)
        body();
    e1.record(s.handle());
    e1.synchronize();
    return Event::elapsed_ms(e0, e1) * 1000.0 / reps;
}

/// GPU time per copy, in us, of a graph of `copies` of what `enqueue` queues.
double in_graph_us(const Stream& s, int reps, int copies,
                   const std::function<void(CUstream)>& enqueue) {
    const Graph g = Graph::capture(
        [&](CUstream cs) {
            for (int i = 0; i < copies; ++i)
                enqueue(cs);
        },
        s.handle());
    gpu_us(s, 3, [&] { g.launch(s.handle()); });
    return gpu_us(s, reps, [&] { g.launch(s.handle()); }) / copies;
}

/// Host time of `body`, in us: the median over `reps` calls, each followed by a sync (not timed).
double host_us(const Stream& s, int reps, const std::function<void()>& body) {
    std::vector<double> us;
    for (int i = 0; i < reps; ++i) {
        const auto t = Clock::now();
        body();
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
        s.synchronize();
    }
    return median(us);
}

} // namespace

int main(int argc, char** argv) {
    int reps = 200, pairs = 5;
    std::vector<int> sizes;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const int v = std::atoi(argv[i + 1]);
        if (a == "--reps")
            reps = v;
        else if (a == "--pairs")
            pairs = v;
        else if (a == "--kernels")
            sizes.push_back(v);
        else {
            std::fprintf(stderr, "bench_plan: unknown option %s\n", a.c_str());
            return 1;
        }
    }
    if (sizes.empty())
        sizes = {8, 16, 32, 64};
    std::string reason;
    if (!device_available(&reason)) {
        std::printf("bench_plan: %s\n", reason.c_str());
        return 2;
    }
    const Context ctx(Device::get(0));
    Stream s;
    std::printf("bench_plan on %s: decode chain rms_norm -> conv1d_update -> delta_rule -> "
                "rms_norm per layer, hidden %d (%d heads x %d), fp32; GPU us per decode step, "
                "%d steps per measurement, %d ABBA pairs\n",
                ctx.device().name().c_str(), bench::DecodeChain::kHidden,
                bench::DecodeChain::kHeads, bench::DecodeChain::kHeadDim, reps, pairs);

    // The floor of a kernel in a graph: an empty kernel, 64 copies in one graph.
    const Module em =
        bench::load_source(ctx, "empty", "extern \"C\" __global__ void empty_k() {}\n");
    const Function empty = em.function("empty_k");
    const double empty_us = in_graph_us(s, reps / 4 + 1, 64, [&](CUstream cs) {
        empty.launch(LaunchConfig{{1, 1, 1}, {32, 1, 1}, 0, cs});
    });
    std::printf("empty kernel in a graph (64 copies): %.3f us per kernel\n", empty_us);

    // What a step-block update can cost: 64 bytes into device memory, host time per call.
    {
        DeviceBuffer dst(64);
        std::array<std::byte, 64> pageable{};
        void* pinned = nullptr;
        check(driver().cuMemHostAlloc(&pinned, 64, 0), "cuMemHostAlloc");
        std::array<CUstreamBatchMemOpParams, 8> ops{};
        for (int i = 0; i < 8; ++i) {
            ops[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
            ops[i].writeValue.address = dst.ptr() + 8 * i;
            ops[i].writeValue.value64 = i;
        }
        const double a = host_us(s, reps, [&] {
            check(driver().cuMemcpyHtoDAsync(dst.ptr(), pageable.data(), 64, s.handle()), "copy");
        });
        const double b = host_us(s, reps, [&] {
            check(driver().cuMemcpyHtoDAsync(dst.ptr(), pinned, 64, s.handle()), "copy");
        });
        const double c = host_us(s, reps, [&] {
            check(driver().cuStreamBatchMemOp(s.handle(), 8, ops.data(), 0), "batch");
        });
        driver().cuMemFreeHost(pinned);
        std::printf("64 B to the device, host us per call: cuMemcpyHtoDAsync pageable %.3f, "
                    "pinned %.3f; cuStreamBatchMemOp 8 x 64-bit writes %.3f\n",
                    a, b, c);
    }

    for (const int n : sizes) {
        bench::DecodeChain chain(ctx, n);
        Plan graph, graph_pdl;
        chain.issue(false, nullptr, &graph);
        chain.issue(true, nullptr, &graph_pdl);
        graph.record(s.handle());
        graph_pdl.record(s.handle());
        const std::array<std::function<void()>, 4> bodies = {
            [&] { chain.issue(false, s.handle(), nullptr); },
            [&] { chain.issue(true, s.handle(), nullptr); },
            [&] { graph.launch(s.handle()); },
            [&] { graph_pdl.launch(s.handle()); }};
        const char* names[] = {"stream", "stream+PDL", "plan", "plan+PDL"};
        for (const auto& b : bodies) // warm-up
            gpu_us(s, reps / 4 + 1, b);
        std::array<std::vector<double>, 4> us;
        std::vector<double> pdl_ratio, plan_ratio;
        for (int p = 0; p < pairs; ++p) {
            std::array<double, 4> a{}, b{};
            for (int k = 0; k < 4; ++k)
                a[k] = gpu_us(s, reps, bodies[k]);
            for (int k = 3; k >= 0; --k)
                b[k] = gpu_us(s, reps, bodies[k]);
            for (int k = 0; k < 4; ++k)
                us[k].insert(us[k].end(), {a[k], b[k]});
            pdl_ratio.push_back((a[2] + b[2]) / (a[3] + b[3]));
            plan_ratio.push_back((a[0] + b[0]) / (a[3] + b[3]));
        }
        // Each kernel alone in a graph: 64 copies of it, per copy.
        double alone = 0;
        std::vector<double> each;
        for (int k = 0; k < n; ++k) {
            each.push_back(in_graph_us(s, reps / 8 + 1, 64,
                                       [&](CUstream cs) { chain.issue(false, cs, nullptr, k); }));
            alone += each.back();
        }
        std::printf("\n%d kernels (%d layers):\n", n, n / 4);
        for (int k = 0; k < 4; ++k)
            std::printf("  %-11s %8.2f us per step (spread %.3f)  %.2f us per kernel\n", names[k],
                        median(us[k]), spread(us[k]), median(us[k]) / n);
        std::printf("  alone       %8.2f us: the sum of each kernel alone in a graph (layer 0: "
                    "%.2f %.2f %.2f %.2f us; an empty kernel %.2f us)\n",
                    alone, each[0], each[1], each[2], each[3], empty_us);
        std::printf("  overhead per kernel (plan - alone) / %d: plan %.3f us, plan+PDL %.3f us\n",
                    n, (median(us[2]) - alone) / n, (median(us[3]) - alone) / n);
        std::printf("  plan / plan+PDL %.3f (spread %.3f); stream / plan+PDL %.3f (spread %.3f)\n",
                    median(pdl_ratio), spread(pdl_ratio), median(plan_ratio),
                    spread(plan_ratio));

        // Host cost of an update: every step's arguments written into the graph, against
        // the step block's one copy.
        const double set_us = host_us(s, 4 * reps, [&] { chain.set_args(graph_pdl); });
        Plan blocked;
        (void)blocked.step_block(ctx, 64); // the chain's kernels do not read it: its cost alone
        chain.issue(true, nullptr, &blocked);
        blocked.record(s.handle());
        // The block's cost: a replay with it against one without, in pairs (host time of
        // each call, a sync after each, the median of the differences).
        const std::array<std::byte, 64> host{};
        std::vector<double> with, without, extra;
        for (int i = 0; i < 4 * reps; ++i) {
            const double a = host_us(s, 1, [&] { blocked.launch(s.handle(), std::span(host)); });
            const double b = host_us(s, 1, [&] { blocked.launch(s.handle()); });
            with.push_back(a);
            without.push_back(b);
            extra.push_back(a - b);
        }
        const double copy_launch_us = median(with), launch_us = median(without);
        // And on the GPU: the plan with its step block (the writer node at its head, new
        // values every step) against the same plan without one (ABBA).
        std::vector<double> gpu_with, gpu_without;
        for (int p = 0; p < pairs; ++p) {
            const auto arm = [&](bool block_too) {
                return gpu_us(s, reps, [&] {
                    if (block_too)
                        blocked.launch(s.handle(), std::span(host));
                    else
                        graph_pdl.launch(s.handle());
                });
            };
            gpu_with.push_back(arm(true));
            gpu_without.push_back(arm(false));
            gpu_without.push_back(arm(false));
            gpu_with.push_back(arm(true));
        }
        std::printf("  update, host: set_args of all %d steps %.2f us; replay with the step block "
                    "(64 B) %.2f us against %.2f us without: the block %.2f us (median of "
                    "%d pairs)\n",
                    n, set_us, copy_launch_us, launch_us, median(extra), 4 * reps);
        std::printf("  GPU per step, plan+PDL with a step block %.2f us, without one %.2f us\n",
                    median(gpu_with), median(gpu_without));
        std::printf("ROW kernels=%d stream=%.3f stream_pdl=%.3f plan=%.3f plan_pdl=%.3f "
                    "alone=%.3f set_args_us=%.3f block_copy_us=%.3f block_gpu_us=%.3f\n",
                    n, median(us[0]), median(us[1]), median(us[2]), median(us[3]), alone, set_us,
                    median(extra), median(gpu_with) - median(gpu_without));
    }
    return 0;
}
