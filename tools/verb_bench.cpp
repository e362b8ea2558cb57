#include "tools/verbs.hpp"

#include "kernels/registry.hpp"
#include "runtime/context.hpp"
#include "tuning/abba.hpp"
#include "tuning/bench_plan.hpp"
#include "tuning/case_arms.hpp"
#include "tuning/roofline.hpp"

#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
struct BenchArgs {
    SourceOptions sources;
    CacheOptions cache;
    std::string kernel;
    std::string shape;
    std::string dtype;
    std::vector<std::string> defines;
    std::vector<std::string> vs;
    BenchOptions bench;
    int pairs = 3;
    std::uint64_t seed = 1;
    int device = 0;
};

int run_bench(BenchArgs& args) {
    // Every usage error is found before the device is touched.
    const KernelContract& contract = args.sources.contract(args.kernel);
    const BenchPlan bp =
        plan_bench(contract, args.shape, args.dtype, args.defines, args.vs, args.pairs);
    const CasePlan& plan = bp.plans[0];

    const Device device = Device::get(args.device);
    const Context context(device);
    EngineOptions options;
    options.cache = args.cache.settings();
    Engine engine(&context, options, args.sources.provider());
    const std::vector<PreparedArm> arms = prepare_arms(engine, contract, bp.sets, device);
    for (std::size_t i = 0; i < arms.size(); ++i) {
        const CasePlan* p = &bp.plans[i];
        require_launch_types(arms[i], contract, {&p, 1});
    }

    // Both arms launch on one set of buffers, each as large as either arm sizes it.
    CaseBuffers buffers(buffer_capacity(bp.plans), args.seed, args.bench.input_sets);
    BenchOptions bench_options = args.bench;
    bench_options.select_inputs = [&buffers](int set) { buffers.select(set); };
    Bench bench(device, bench_options);
    const Ceilings ceilings = measure_ceilings(device);
    const Work work = bp.work();

    std::printf("kjit bench %s %s %s on %s (%s, %d SMs), inputs seed %llu\n",
                contract.name.c_str(), shape_text(contract, bp.shape).c_str(),
                std::string(dtype_name(bp.dtype)).c_str(), device.name().c_str(),
                device.arch().c_str(), device.sm_count(),
                static_cast<unsigned long long>(args.seed));
    std::printf("  launch: %s (%s)\n", plan.launches_text().c_str(), bench.describe().c_str());
    if (arms.size() == 1) {
        const Stats s = bench.run(case_launch(arms[0], plan, buffers));
        std::printf("  reading: %s\n", arms[0].provenance.text().c_str());
        std::printf("  stats: %s\n", s.summary().c_str());
        std::printf("  reps ms: %s\n", s.samples_text().c_str());
        std::printf("%s", format_roofline(roofline(work, s, ceilings)).c_str());
        return kOk;
    }
    const AbbaArm a{defines_text(arms[0].defines), case_launch(arms[0], bp.plans[0], buffers),
                    arms[0].provenance};
    const AbbaArm b{defines_text(arms[1].defines), case_launch(arms[1], bp.plans[1], buffers),
                    arms[1].provenance};
    const AbbaResult r = run_abba(bench, a, b, args.pairs);
    std::printf("%s", format_abba(r, a, b).c_str());
    std::printf("%s", format_roofline(roofline(bp.work(0), r.a, ceilings), "A").c_str());
    std::printf("%s", format_roofline(roofline(bp.work(1), r.b, ceilings), "B").c_str());
    return kOk;
}
} // namespace

Action add_bench(CLI::App& app) {
    auto args = std::make_shared<BenchArgs>();
    auto* sub = app.add_subcommand(
        "bench", "time a kernel at a shape with device events: statistics, every rep and the "
                 "roofline; with --vs, an A B B A comparison of two define sets");
    args->sources.add_to(*sub);
    args->cache.add_to(*sub);
    sub->add_option("kernel", args->kernel, "kernel name, e.g. rms_norm")->required();
    sub->add_option("--shape", args->shape, "shape, e.g. rows=8192,n=7168 (default: the kernel's)");
    sub->add_option("--dtype", args->dtype,
                    "element type: f32 or bf16 (default: the kernel's first)");
    sub->add_option("-D,--define", args->defines, "NAME=VALUE injected as a define (arm A)");
    sub->add_option("--vs", args->vs,
                    "NAME=VALUE overriding arm A's defines for arm B: runs A B B A");
    sub->add_option("--warmup", args->bench.warmup, "untimed repetitions")->capture_default_str();
    sub->add_option("--reps", args->bench.reps, "timed repetitions")->capture_default_str();
    sub->add_option("--pairs", args->pairs, "A B pairs with --vs")->capture_default_str();
    sub->add_flag("--flush-l2", args->bench.flush_l2, "write 2 x L2 before every repetition");
    sub->add_flag("--graph", args->bench.graph, "time CUDA graph launches (tiny kernels)");
    sub->add_option("--calls", args->bench.calls,
                    "launches per repetition, back to back (in one graph with --graph); "
                    "times are per call")
        ->check(CLI::Range(1, 10000))
        ->capture_default_str();
    sub->add_option("--input-sets", args->bench.input_sets, "input sets to rotate among")
        ->capture_default_str();
    sub->add_option("--seed", args->seed, "input generator seed")
        ->capture_default_str()
        ->check(seed_check());
    sub->add_option("--device", args->device, "device ordinal")->capture_default_str();
    return [args] { return run_bench(*args); };
}

} // namespace kjit::cli
