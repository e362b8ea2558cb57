#include "tools/verbs.hpp"

#include "runtime/context.hpp"
#include "tuning/selfcheck.hpp"

#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
struct CheckArgs {
    SourceOptions sources;
    CacheOptions cache;
    std::uint64_t seed = 1;
    int device = 0;
};

int run_check(const CheckArgs& args) {
    const int audit_rc = run_audit(args.sources, {"sm_90"}, args.cache);
    std::string reason;
    if (!device_available(&reason)) {
        std::printf("\nlaunch checks skipped: %s\n", reason.c_str());
        return audit_rc;
    }
    const Device device = Device::get(args.device);
    const Context context(device);
    EngineOptions options;
    options.cache = args.cache.settings();
    Engine engine(&context, options, SourceProvider(args.sources.dir));
    const auto cases = default_rms_norm_cases();
    std::vector<KernelSpec> specs;
    for (const auto& c : cases)
        specs.push_back(rms_norm_spec(c));
    int failed = 0;
    for (const auto& row : engine.prepare({}, specs, progress_line("specializing")))
        if (row.error) {
            ++failed;
            try {
                std::rethrow_exception(row.error);
            } catch (const std::exception& e) {
                std::printf("  %s: %s\n", row.name.c_str(), e.what());
            }
        }
    if (failed)
        return kFindings;
    std::printf("\nkjit check on %s (%s, %d SMs), inputs seed %llu\n", device.name().c_str(),
                device.arch().c_str(), device.sm_count(),
                static_cast<unsigned long long>(args.seed));
    std::printf("  %-14s %-18s %-14s %-13s %-10s %-11s %-10s %s\n", "entry", "shape", "defines",
                "grid", "block", "rel L2 err", "tolerance", "result");
    for (const auto& c : cases) {
        const CheckResult r = check_rms_norm(engine, c, args.seed);
        failed += r.passed() ? 0 : 1;
        std::printf("  %-14s %-18s %-14s %-13s %-10s %-11.3g %-10.0e %s\n", r.entry.c_str(),
                    r.shape.c_str(), r.defines.c_str(), r.grid.c_str(), r.block.c_str(), r.error,
                    r.tolerance, r.passed() ? "ok" : "FAIL");
    }
    std::printf("check: %d failed\n", failed);
    return failed || audit_rc ? kFindings : kOk;
}
} // namespace

Action add_check(CLI::App& app) {
    auto args = std::make_shared<CheckArgs>();
    auto* sub = app.add_subcommand(
        "check", "kjit's main job: audit every kernel, then (with a GPU) launch each at the "
                 "default model shapes and compare with the float64 reference");
    args->sources.add_to(*sub);
    args->cache.add_to(*sub);
    sub->add_option("--seed", args->seed, "input generator seed")->capture_default_str();
    sub->add_option("--device", args->device, "device ordinal")->capture_default_str();
    return [args] { return run_check(*args); };
}

} // namespace kjit::cli
