#include "tools/verbs.hpp"

#include "runtime/context.hpp"
#include "tuning/sweep_judge.hpp"
#include "tuning/sweep_report.hpp"
#include "tuning/sweep_runner.hpp"
#include "tuning/tuned_record.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
struct SweepArgs {
    SourceOptions sources;
    std::string file;
    bool dry_run = false, no_cache = false;
    std::string arch = "sm_90";
    std::string devices = "0";
    std::string out;
    std::string record; ///< --record: the tuned table the winner goes to
    std::uint64_t seed = 1;
};

std::vector<int> parse_devices(const std::string& text) {
    std::vector<int> out;
    if (text == "all") {
        for (int i = 0; i < Device::count(); ++i)
            out.push_back(i);
        return out;
    }
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t end = std::min(text.find(',', pos), text.size());
        const std::string item = text.substr(pos, end - pos);
        if (item.empty() || item.size() > 4 ||
            !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
            throw ConfigError("--devices takes 'all' or ordinals such as 0,1; got '" + text + "'");
        out.push_back(std::stoi(item));
        pos = end + 1;
    }
    return out;
}

int run_sweep_file(const SweepArgs& args, const std::string& file) {
    const SweepSpec spec = SweepSpec::load(file);
    SweepOptions o;
    o.sources = args.sources.on_disk("kjit sweep");
    o.dry_run = args.dry_run;
    o.no_cache = args.no_cache;
    o.arch = args.arch;
    o.seed = args.seed;
    o.progress = progress_line("compiling");
    o.measured = measure_progress();
    if (!o.dry_run)
        o.devices = parse_devices(args.devices);
    const SweepResult r = run_sweep(spec, o);
    // The contract, and its source file where that is named otherwise.
    const std::string kernel = spec.contract.name.empty() || spec.contract.name == spec.kernel
                                   ? spec.kernel
                                   : spec.contract.name + " (" + spec.kernel + ".cu)";
    std::printf("kjit sweep %s: kernel %s, %zu variants (%zu rejected by the constraints)\n",
                file.c_str(), kernel.c_str(), r.rows.size(), r.rejected);
    std::printf("  search %s\n  %s\n", r.search.c_str(), r.provenance.text().c_str());
    const int failed = failed_rows(r, o.dry_run);
    if (o.dry_run) {
        std::printf("  dry run: every variant compiled for %s, nothing launched\n",
                    r.provenance.arch.c_str());
        std::printf("  %-32s %-14s %-12s %6s  %s\n", "variant", "grid", "block", "smem", "compile");
        for (const auto& row : r.rows)
            std::printf("  %-32s %-14s %-12s %6u  %s\n",
                        (row.variant.label() + (row.variant.baseline ? " *" : "")).c_str(),
                        row.variant.grid.str().c_str(), row.variant.block.str().c_str(),
                        row.variant.smem, row.error.empty() ? "ok" : row.error.c_str());
        std::printf("sweep plan: %zu variants, %d failed to compile, %.0f ms\n", r.rows.size(),
                    failed, r.wall_ms);
        return failed ? kFindings : kOk;
    }
    std::printf("  copy bandwidth %.0f GB/s (device-to-device, this run); * = baseline\n%s",
                r.copy_gbps, sweep_table(spec, r).c_str());
    const std::filesystem::path out = sweep_out_dir(file, args.out);
    write_sweep_outputs(spec, r, out);
    std::printf("sweep: %zu variants, %d failed their check or failed, %.0f ms; wrote %s/sweep.csv, "
                "sweep.json, sweep.svg\n",
                r.rows.size(), failed, r.wall_ms, out.c_str());
    if (!args.record.empty())
        record_winner(args.record, spec, r);
    return failed ? kFindings : kOk;
}
/// FILE, else every sweep file the project file names, in order.
int run_sweep_verb(const SweepArgs& args) {
    (void)args.sources.on_disk("kjit sweep");
    (void)args.sources.register_contracts();
    if (!args.file.empty())
        return run_sweep_file(args, args.file);
    const Project* project = args.sources.project_file();
    if (!project || project->sweep_files.empty())
        throw ConfigError("kjit sweep needs a sweep file: FILE, or sweep_files in the project "
                          "file");
    if (!args.out.empty() && project->sweep_files.size() > 1)
        throw ConfigError("--out names one directory and the project file names " +
                          std::to_string(project->sweep_files.size()) +
                          " sweep files: name one FILE");
    int worst = kOk;
    for (const ProjectPath& p : project->sweep_files)
        worst = std::max(worst, run_sweep_file(args, display_path(p.path)));
    return worst;
}
} // namespace

Action add_sweep(CLI::App& app) {
    auto args = std::make_shared<SweepArgs>();
    auto* sub = app.add_subcommand(
        "sweep", "compile, check and time every variant of a sweep file, ranked (README: schema)");
    sub->add_option("file", args->file, "sweep TOML (default: the project file's sweep_files)");
    sub->add_flag("--dry-run", args->dry_run,
                  "parse, expand, apply constraints and compile every variant; launch nothing");
    sub->add_flag("--no-cache", args->no_cache, "bypass the compile cache and the results cache");
    sub->add_option("--arch", args->arch, "dry run target architecture")
        ->capture_default_str()
        ->check(arch_check());
    sub->add_option("--devices", args->devices, "GPUs to spread the variants over: all, or 0,1")
        ->check(CLI::Validator(
            [](const std::string& text) {
                if (text == "all")
                    return std::string();
                try {
                    (void)parse_devices(text);
                } catch (const ConfigError& e) {
                    return e.message;
                }
                return std::string();
            },
            "DEVICES", "devices"))
        ->capture_default_str();
    sub->add_option("--out", args->out, "directory for sweep.csv/json/svg (default FILE.out)");
    sub->add_option("--seed", args->seed, "input generator seed")
        ->capture_default_str()
        ->check(seed_check());
    sub->add_option("--record", args->record,
                    "write the fastest variant that passed its check to this tuned table");
    args->sources.add_to(*sub);
    return [args] {
        if (!args->record.empty() && args->dry_run)
            throw ConfigError("--record writes a measured winner: a dry run measures nothing");
        if (!args->out.empty() && args->dry_run)
            throw ConfigError("--out names where the measured results go: a dry run measures "
                              "nothing and writes no file (its plan is what it prints)");
        return run_sweep_verb(*args);
    };
}

} // namespace kjit::cli
