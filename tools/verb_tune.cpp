#include "tools/verbs.hpp"

#include "kernels/shape.hpp"
#include "runtime/context.hpp"
#include "tuning/sweep_judge.hpp"
#include "tuning/sweep_runner.hpp"
#include "tuning/tune.hpp"
#include "tuning/tuned_record.hpp"

#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
/// The line a recorded entry gets: where, what, the defines and the two medians.
void print_recorded(const std::filesystem::path& table, const TunedEntry& entry,
                    const std::string& note) {
    std::string defines;
    for (const auto& [k, v] : entry.defines)
        defines += (defines.empty() ? "" : " ") + k + "=" + v;
    std::printf("recorded in %s: %s %s %s on %s %s: %s, %.2f us (baseline %.2f us)\n",
                display_path(table).c_str(), entry.contract_name().c_str(),
                tuned_shape_text(entry.shape).c_str(), entry.dtype.c_str(), entry.gpu.c_str(),
                entry.arch.c_str(), defines.c_str(), entry.median_us, entry.baseline_us);
    if (!note.empty())
        std::printf("  %s\n", note.c_str());
}
} // namespace

void record_winner(const std::filesystem::path& table, const SweepSpec& spec,
                   const SweepResult& result) {
    const TunedPick pick = tuned_pick(result);
    const TunedEntry entry = tuned_entry(spec, result, pick);
    record_entry(table, entry);
    print_recorded(table, entry, pick.note);
}

namespace {
struct TuneArgs {
    SourceOptions sources;
    std::string kernel;
    std::string shapes;
    std::string sweep;
    std::string table;
    std::string dtype;
    bool no_cache = false;
    std::uint64_t seed = 1;
    int device = 0;
};

int run_tune_verb(const TuneArgs& args) {
    (void)args.sources.register_contracts();
    TuneRequest request{args.kernel, split_shapes(args.shapes), args.sweep, args.table, args.dtype};
    TunePlan plan = plan_tune(request, args.sources.project_file());
    SweepOptions o;
    o.sources = args.sources.on_disk("kjit tune");
    o.no_cache = args.no_cache;
    o.seed = args.seed;
    o.devices = {args.device};
    o.progress = progress_line("compiling");
    o.measured = measure_progress();
    std::printf("kjit tune %s: %zu shape(s) with %s into %s\n", args.kernel.c_str(),
                plan.shapes.size(), plan.spec.file.c_str(), display_path(plan.table).c_str());
    int failed = 0;
    run_tune(plan, o, [&](const TunedShape& t) {
        std::printf("  %s: %zu variants (%s), %d failed their check or failed\n",
                    shape_text(plan.spec.contract, t.shape).c_str(), t.result.rows.size(),
                    t.result.search.c_str(), t.failed);
        print_recorded(plan.table, t.entry, t.note);
        failed += t.failed;
    });
    return failed ? kFindings : kOk;
}
} // namespace

Action add_tune(CLI::App& app) {
    auto args = std::make_shared<TuneArgs>();
    auto* sub = app.add_subcommand(
        "tune", "sweep a kernel at each of several shapes and record each winner in the tuned "
                "table that start-up specialization reads");
    sub->add_option("kernel", args->kernel, "the contract to tune, e.g. rms_norm")->required();
    sub->add_option("--shapes", args->shapes,
                    "shapes, ';' between: rows=1,n=4096;rows=16384,n=4096")
        ->required();
    sub->add_option("--sweep", args->sweep,
                    "sweep file (default: the project's sweep file of the kernel)");
    sub->add_option("--table", args->table, "tuned table (default: the project file's `tuned`)");
    sub->add_option("--dtype", args->dtype, "element type (default: the sweep file's)");
    sub->add_flag("--no-cache", args->no_cache, "bypass the compile cache and the results cache");
    sub->add_option("--seed", args->seed, "input generator seed")
        ->capture_default_str()
        ->check(seed_check());
    sub->add_option("--device", args->device, "device ordinal")->capture_default_str();
    args->sources.add_to(*sub);
    return [args] { return run_tune_verb(*args); };
}

} // namespace kjit::cli
