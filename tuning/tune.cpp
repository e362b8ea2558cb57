#include "tuning/tune.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "kernels/shape.hpp"
#include "tuning/sweep_judge.hpp"
#include "tuning/tuned_record.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>

namespace kjit {

TunePlan plan_tune(const TuneRequest& request, const Project* project) {
    TunePlan plan;
    if (!request.sweep.empty()) {
        plan.spec = SweepSpec::load(request.sweep);
    } else {
        bool found = false;
        std::vector<std::string> swept; // the kernels the project's sweep files sweep
        if (project)
            for (const ProjectPath& p : project->sweep_files) {
                SweepSpec spec = SweepSpec::load(display_path(p.path));
                if (spec.contract.name == request.kernel) {
                    plan.spec = std::move(spec);
                    found = true;
                    break;
                }
                if (std::find(swept.begin(), swept.end(), spec.contract.name) == swept.end())
                    swept.push_back(spec.contract.name);
            }
        if (!found)
            throw ConfigError(
                "kjit tune " + request.kernel + " needs a sweep file of " + request.kernel +
                ": --sweep FILE, or one among the project file's sweep_files" +
                (swept.empty() ? std::string()
                               : " (they sweep " + join(swept) + ")" +
                                     did_you_mean(nearest(request.kernel, swept))));
    }
    if (plan.spec.contract.name != request.kernel)
        throw ConfigError("the sweep file sweeps " + plan.spec.contract.name + ", not " +
                              request.kernel,
                          plan.spec.file);
    if (!request.table.empty())
        plan.table = request.table;
    else if (project && project->tuned)
        plan.table = project->tuned->path;
    else
        throw ConfigError("kjit tune needs a tuned table: --table FILE, or `tuned` in the project "
                          "file");
    if (!request.dtype.empty()) {
        const DType d = parse_dtype(request.dtype);
        const auto& dtypes = plan.spec.contract.dtypes;
        if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end())
            throw ConfigError(request.kernel + " has no dtype " + request.dtype);
        plan.spec.dtype = d;
    }
    // Every shape is checked before the first one runs.
    for (const std::string& s : request.shapes)
        plan.shapes.push_back(parse_shape(plan.spec.contract, s));
    if (plan.shapes.empty())
        throw ConfigError("kjit tune needs at least one shape, e.g. rows=1,n=4096");
    // The sweep lists' shape expressions and the baseline at every shape, before the first
    // entry is written.
    for (const ShapeValues& shape : plan.shapes) {
        try {
            plan.spec.set_shape({shape.begin(), shape.end()});
        } catch (const ConfigError& e) {
            throw ConfigError(e.message + " (at shape " + shape_text(plan.spec.contract, shape) +
                                  ")",
                              e.file, e.line, e.column);
        }
    }
    return plan;
}

void record_entry(const std::filesystem::path& table, TunedEntry entry) {
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
    t.record(std::move(entry));
    t.save();
}

std::vector<TunedShape> run_tune(TunePlan& plan, const SweepOptions& options,
                                 const std::function<void(const TunedShape&)>& on_shape) {
    std::vector<TunedShape> out;
    for (const ShapeValues& shape : plan.shapes) {
        plan.spec.set_shape({shape.begin(), shape.end()});
        TunedShape t;
        t.shape = shape;
        t.result = run_sweep(plan.spec, options);
        t.failed = failed_rows(t.result, false);
        const TunedPick pick = tuned_pick(t.result);
        t.entry = tuned_entry(plan.spec, t.result, pick);
        t.note = pick.note;
        record_entry(plan.table, t.entry);
        if (on_shape)
            on_shape(t);
        out.push_back(std::move(t));
    }
    return out;
}

} // namespace kjit
