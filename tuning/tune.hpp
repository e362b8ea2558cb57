#pragma once
// `kjit tune`: a sweep at each of several shapes, each winner recorded in the tuned table that
// start-up specialization reads. The verb and the Python module's kjit.tune both run this.

#include "jit/project.hpp"
#include "jit/tuned_table.hpp"
#include "kernels/shape.hpp"
#include "tuning/sweep_result.hpp"
#include "tuning/sweep_runner.hpp"
#include "tuning/sweep_spec.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace kjit {

/// What a tune was asked for, before any file is read.
struct TuneRequest {
    std::string kernel;              ///< the contract, e.g. rms_norm
    std::vector<std::string> shapes; ///< "rows=1,n=4096" each
    std::string sweep;               ///< sweep file; "": the project's sweep file of `kernel`
    std::string table;               ///< tuned table; "": the project file's `tuned`
    std::string dtype;               ///< "": the sweep file's
};

/// A request resolved: the sweep file, the table and every shape, all checked.
struct TunePlan {
    SweepSpec spec;
    std::filesystem::path table;
    std::vector<ShapeValues> shapes;
};

/// One shape's sweep and the entry recorded from it.
struct TunedShape {
    ShapeValues shape;
    SweepResult result;
    TunedEntry entry;
    std::string note; ///< tuned_pick's note ("" when the winner cleared the noise)
    int failed = 0;   ///< variants that failed their check or failed to run
};

/// Resolves `request` (the sweep file from --sweep or the project's sweep_files, the table from
/// --table or the project's `tuned`, the dtype among the contract's, every shape parsed) before
/// anything runs: ConfigError naming what is missing or wrong.
TunePlan plan_tune(const TuneRequest& request, const Project* project);

/// Adds `entry` to the tuned table at `table`: read, added and written whole under the lock
/// `table`.lock, so that two tunes (one per GPU) can share one table.
void record_entry(const std::filesystem::path& table, TunedEntry entry);

/// Sweeps at each of `plan`'s shapes in order (plan.spec.shape set to each) and records each
/// winner (record_entry); `on_shape` sees each shape once it is recorded.
std::vector<TunedShape> run_tune(TunePlan& plan, const SweepOptions& options,
                                 const std::function<void(const TunedShape&)>& on_shape = {});

} // namespace kjit
