#include "tools/verbs.hpp"

#include "kernels/shape.hpp"
#include "runtime/context.hpp"
#include "tuning/sweep_judge.hpp"
#include "tuning/sweep_runner.hpp"
#include "tuning/tuned_record.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace kjit::cli {

void record_winner(const std::filesystem::path& table, const SweepSpec& spec,
                   const SweepResult& result) {
    TunedEntry entry = tuned_entry(spec, result);
    // Two tunes (one per GPU) write one table: read, add and write under a lock of its own.
    const std::string lock_path = table.string() + ".lock";
    const int fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) {
        if (fd >= 0)
            ::close(fd);
        throw ConfigError("cannot lock the tuned table", lock_path);
    }
    struct Unlock {
        int fd;
        ~Unlock() { ::close(fd); } // closing releases the lock
    } unlock{fd};
    TunedTable t = TunedTable::load(table);
    t.file = table;
    std::string defines;
    for (const auto& [k, v] : entry.defines)
        defines += (defines.empty() ? "" : " ") + k + "=" + v;
    std::printf("recorded in %s: %s %s %s on %s %s: %s, %.2f us (baseline %.2f us)\n",
                display_path(table).c_str(), entry.contract_name().c_str(),
                tuned_shape_text(entry.shape).c_str(), entry.dtype.c_str(), entry.gpu.c_str(),
                entry.arch.c_str(), defines.c_str(), entry.median_us, entry.baseline_us);
    if (const std::string note = tuned_pick(result).note; !note.empty())
        std::printf("  %s\n", note.c_str());
    t.record(std::move(entry));
    t.save();
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

/// --sweep, else the project's first sweep file whose kernel is `kernel`.
SweepSpec sweep_of(const TuneArgs& args) {
    if (!args.sweep.empty())
        return SweepSpec::load(args.sweep);
    const Project* project = args.sources.project_file();
    if (project)
        for (const ProjectPath& p : project->sweep_files) {
            SweepSpec spec = SweepSpec::load(display_path(p.path));
            if (spec.contract.name == args.kernel)
                return spec;
        }
    throw ConfigError("kjit tune " + args.kernel + " needs a sweep file of " + args.kernel +
                      ": --sweep FILE, or one among the project file's sweep_files");
}

/// --table, else the project file's `tuned`.
std::filesystem::path table_of(const TuneArgs& args) {
    if (!args.table.empty())
        return args.table;
    if (const Project* p = args.sources.project_file(); p && p->tuned)
        return p->tuned->path;
    throw ConfigError("kjit tune needs a tuned table: --table FILE, or `tuned` in the project "
                      "file");
}

int run_tune(const TuneArgs& args) {
    (void)args.sources.register_contracts();
    SweepSpec spec = sweep_of(args);
    if (spec.contract.name != args.kernel)
        throw ConfigError("the sweep file sweeps " + spec.contract.name + ", not " + args.kernel,
                          spec.file);
    const std::filesystem::path table = table_of(args);
    if (!args.dtype.empty()) {
        const DType d = parse_dtype(args.dtype);
        if (std::find(spec.contract.dtypes.begin(), spec.contract.dtypes.end(), d) ==
            spec.contract.dtypes.end())
            throw ConfigError(args.kernel + " has no dtype " + args.dtype);
        spec.dtype = d;
    }
    // Every shape is checked before the first one runs.
    std::vector<ShapeValues> shapes;
    for (const std::string& s : split_shapes(args.shapes))
        shapes.push_back(parse_shape(spec.contract, s));
    if (shapes.empty())
        throw ConfigError("kjit tune needs --shapes, e.g. \"rows=1,n=4096;rows=16384,n=4096\"");
    SweepOptions o;
    o.sources = args.sources.on_disk("kjit tune");
    o.no_cache = args.no_cache;
    o.seed = args.seed;
    o.devices = {args.device};
    o.progress = progress_line("compiling");
    o.measured = measure_progress();
    std::printf("kjit tune %s: %zu shape(s) with %s into %s\n", args.kernel.c_str(), shapes.size(),
                spec.file.c_str(), display_path(table).c_str());
    int failed = 0;
    for (const ShapeValues& shape : shapes) {
        spec.shape.clear();
        for (const auto& [k, v] : shape)
            spec.shape[k] = v;
        const SweepResult r = run_sweep(spec, o);
        const int bad = failed_rows(r, false);
        std::printf("  %s: %zu variants (%s), %d failed their check or failed\n",
                    shape_text(spec.contract, shape).c_str(), r.rows.size(), r.search.c_str(), bad);
        failed += bad;
        record_winner(table, spec, r);
    }
    return failed ? kFindings : kOk;
}
} // namespace

Action add_tune(CLI::App& app) {
    auto args = std::make_shared<TuneArgs>();
    auto* sub = app.add_subcommand(
        "tune", "sweep a kernel at each of several shapes and record each winner in the tuned "
                "table that start-up specialization reads");
    sub->add_option("kernel", args->kernel, "the contract to tune, e.g. rms_norm")->required();
    sub->add_option("--shapes", args->shapes, "shapes, ';' between: rows=1,n=4096;rows=16384,n=4096")
        ->required();
    sub->add_option("--sweep", args->sweep,
                    "sweep file (default: the project's sweep file of the kernel)");
    sub->add_option("--table", args->table, "tuned table (default: the project file's `tuned`)");
    sub->add_option("--dtype", args->dtype, "element type (default: the sweep file's)");
    sub->add_flag("--no-cache", args->no_cache, "bypass the compile cache and the results cache");
    sub->add_option("--seed", args->seed, "input generator seed")->capture_default_str();
    sub->add_option("--device", args->device, "device ordinal")->capture_default_str();
    args->sources.add_to(*sub);
    return [args] { return run_tune(*args); };
}

} // namespace kjit::cli
