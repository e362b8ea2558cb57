#include "tuning/sweep_runner.hpp"

#include "core/flags.hpp"
#include "core/names.hpp"
#include "jit/cache_key.hpp"
#include "jit/define_use.hpp"
#include "jit/tuned_table.hpp"
#include "kernels/launch_case.hpp"
#include "runtime/engine.hpp"
#include "tuning/roofline.hpp"
#include "tuning/sweep_cache.hpp"
#include "tuning/sweep_judge.hpp"
#include "tuning/sweep_measure.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

namespace kjit {

void check_sweep_defines_read(const SweepSpec& spec, const SourceSet& sources) {
    const SourceFile& kernel = [&]() -> const SourceFile& {
        try {
            return sources.kernel(spec.kernel);
        } catch (const NotFoundError& e) {
            const auto [line, col] = spec.positions.at("kernel");
            throw ConfigError(e.what(), spec.file, line, col);
        }
    }();
    std::map<std::string, std::string> named(spec.defines.begin(), spec.defines.end());
    for (const auto& p : spec.params)
        if (p.define)
            named.emplace(p.name, "");
    std::optional<std::pair<std::pair<int, int>, UnreadDefine>> first;
    for (UnreadDefine& u : unread_defines(sources, kernel, named)) {
        const auto at = spec.positions.find(u.name);
        const std::pair<int, int> where = at != spec.positions.end() ? at->second
                                                                     : std::pair<int, int>{1, 1};
        if (!first || where < first->first)
            first.emplace(where, std::move(u));
    }
    if (first)
        throw ConfigError(
            "define " + first->second.name + " " +
                unread_reason(first->second, kernel.path + " or the files it includes"),
            spec.file, first->first.first, first->first.second);
}

namespace {

/// The contract's [defines] go into every variant too: refused at the contract file's line (a
/// contract written in code, such as kjit's rms_norm over a kernel of that name: at the sweep
/// file's `kernel`).
void check_contract_defines_read(const SweepSpec& spec, const SourceSet& sources) {
    std::vector<Diagnostic> unread = unread_contract_defines(spec.contract, sources);
    for (Diagnostic& d : unread)
        if (d.path.empty()) {
            const auto [line, col] = spec.positions.at("kernel");
            d.path = spec.file;
            d.line = line;
            d.column = col;
        }
    refuse_unread_diagnostics(unread, process_flags().get_bool(kFlagAllowUnreadDefines));
}

std::string spec_name(const SweepSpec& spec, const SweepVariant& v) {
    return spec.kernel + "[" + v.label() + "]";
}

/// ConfigError with `message` where the contract writes `where_key` (else at the sweep file's
/// `kernel`).
[[noreturn]] void fail_at(const SweepSpec& spec, const std::string& where_key,
                          const std::string& message) {
    const auto at = spec.contract.where.find(where_key);
    if (at != spec.contract.where.end())
        throw ConfigError(message, at->second);
    const auto [line, col] = spec.positions.at("kernel");
    throw ConfigError(message, spec.file, line, col);
}

/// A variant whose compile failed because a step's qualified entry names nothing fails the
/// sweep at the contract's step entry: every variant's compile fails the same way.
void fail_if_unknown_entry(const SweepSpec& spec, const SweepVariant& v,
                           const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        std::string where_key;
        if (const std::string problem =
                unknown_entry_problem(v.plan, e.what(), spec.kernel + ".cu", where_key);
            !problem.empty())
            fail_at(spec, where_key, "variant " + v.label() + ": " + problem);
    }
}

/// The arguments of the first compiled row (row `index(r)` is variant r's) against the C++
/// types of the kernel's parameters (launch_type_problem): what no launch check can see. One
/// front-end compile, not one per variant: a define that changes a parameter's type is not
/// the sweeps' business.
void check_launch_types(const SweepSpec& spec, const std::vector<SweepVariant>& variants,
                        std::span<const PrepareRow> rows, const SourceSet& sources,
                        const std::function<std::size_t(std::size_t)>& index) {
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].error || !rows[r].compiled || index(r) >= variants.size())
            continue;
        const SweepVariant& v = variants[index(r)];
        std::string where_key;
        if (const std::string problem =
                launch_type_problem(v.plan, sources, rows[r].compiled->options, where_key);
            !problem.empty())
            fail_at(spec, where_key, "variant " + v.label() + ": " + problem);
        return;
    }
}

/// A dry run's launch check: every launch of every compiled variant against its entry point's
/// parameters and launch bound, as the first launch would check it, then check_launch_types.
/// ConfigError at the first mistake, where the contract writes it.
void check_launches(const SweepSpec& spec, const std::vector<SweepVariant>& variants,
                    std::span<const PrepareRow> rows, const SourceSet& sources) {
    for (std::size_t i = 0; i < rows.size() && i < variants.size(); ++i) {
        if (rows[i].error || !rows[i].compiled)
            continue;
        const CasePlan& plan = variants[i].plan;
        for (std::size_t s = 0; s < plan.steps.size(); ++s) {
            const StepPlan& step = plan.steps[s];
            if (step.kind != PipelineStep::Kind::launch)
                continue;
            std::string where_key;
            const std::string problem =
                step_launch_problem(plan, s, *rows[i].compiled, spec.kernel + ".cu", where_key);
            if (!problem.empty())
                fail_at(spec, where_key,
                        "variant " + variants[i].label() + ": step " + std::to_string(s + 1) +
                            " (" + step.entry + "): " + problem);
        }
    }
    check_launch_types(spec, variants, rows, sources, [](std::size_t r) { return r; });
}

} // namespace

namespace {

/// Compiles, runs, checks and times `variants` (not judged: judge_sweep does that over every
/// row); `baseline` is what a reference variant is made from. A dry run compiles and checks the
/// launches only.
SweepResult run_variants(const SweepSpec& spec, const SweepOptions& options,
                         const std::vector<SweepVariant>& variants, const SweepVariant& baseline) {
    SweepResult result;
    SourceProvider provider =
        options.sources ? options.sources->provider() : default_sources().provider();
    const auto sources = provider.current();
    check_sweep_defines_read(spec, *sources);
    check_contract_defines_read(spec, *sources);
    // What every variant is compiled with: the contract's defaults and the fixed defines.
    Defines fixed = spec.contract.defines;
    for (const auto& [k, v] : spec.defines)
        fixed[k] = v;
    for (const SweepParam& p : spec.params)
        fixed.erase(p.name);
    result.provenance.defines = defines_text(fixed);
    result.provenance.source_hash = sources->kernel(spec.kernel).hash.hex().substr(0, 12);
    result.tuned_source = tuned_source_hash(*sources, spec.kernel);
    result.rows.resize(variants.size());
    for (std::size_t i = 0; i < variants.size(); ++i)
        result.rows[i].variant = variants[i];

    // A contract step that names a template instantiation is compiled with it.
    const std::vector<std::string> instantiations = spec.contract.name_expressions(spec.dtype);
    std::vector<KernelSpec> specs;
    for (const auto& v : variants) {
        specs.push_back({spec_name(spec, v), spec.kernel, v.defines, ""});
        specs.back().instantiations = instantiations;
    }
    // Tolerance mode without a float64 reference: the variant every variant is compared with.
    std::optional<SweepVariant> reference;
    std::optional<KernelSpec> reference_spec;
    if (uses_reference_variant(spec)) {
        reference = reference_variant(spec, baseline);
        reference_spec = KernelSpec{spec.kernel + "[reference " + reference->label() + "]",
                                    spec.kernel, reference->defines, ""};
        reference_spec->instantiations = instantiations;
    }
    // The reference variant's compile failure fails the sweep: nothing could be checked.
    const auto require_reference = [&](const PrepareRow& row) {
        if (!row.error)
            return;
        fail_if_unknown_entry(spec, *reference, row.error);
        try {
            std::rethrow_exception(row.error);
        } catch (const std::exception& e) {
            throw spec.error_at("[check] reference_variant", "the reference variant (" +
                                                                 reference->label() +
                                                                 ") does not compile: " + e.what());
        }
    };

    if (options.dry_run) {
        EngineOptions eo;
        eo.arch = options.arch.empty() ? "sm_90" : options.arch;
        eo.cache.use_disk = !options.no_cache;
        eo.check_only = true;
        Engine engine(nullptr, eo, std::move(provider));
        result.provenance.arch = engine.arch();
        result.provenance.tier = engine.flags().tier();
        std::vector<KernelSpec> all = specs;
        if (reference_spec)
            all.push_back(*reference_spec);
        auto rows = engine.prepare({}, all, options.progress);
        std::optional<PrepareRow> reference_row;
        if (reference_spec) {
            require_reference(rows.back());
            reference_row = std::move(rows.back());
            rows.pop_back();
        }
        // The variants' launches, then the reference's (a mistake shows at a variant first).
        check_launches(spec, variants, rows, *sources);
        if (reference_row)
            check_launches(spec, {*reference}, std::span<const PrepareRow>(&*reference_row, 1),
                           *sources);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (!rows[i].error)
                continue;
            fail_if_unknown_entry(spec, variants[i], rows[i].error);
            try {
                std::rethrow_exception(rows[i].error);
            } catch (const std::exception& e) {
                result.rows[i].error = e.what();
            }
        }
        return result;
    }

    // One worker per device; variant i runs on device i % n, the baseline first.
    std::mutex result_mutex;
    std::size_t measured = 0, total_to_measure = 0; // under result_mutex
    const std::size_t base = static_cast<std::size_t>(
        std::find_if(variants.begin(), variants.end(), [](const auto& v) { return v.baseline; }) -
        variants.begin());
    std::exception_ptr failure;
    const auto worker = [&](std::size_t worker_index) {
        try {
            const int ordinal = options.devices[worker_index];
            const Device device = Device::get(ordinal);
            const Context ctx(device);
            EngineOptions eo;
            eo.cache.use_disk = !options.no_cache;
            Engine engine(&ctx, eo, SourceProvider(provider.override_dir(), provider.include_dirs()));
            // Keys first: rows in the results cache need neither compile nor launch.
            std::vector<KernelSpec> to_prepare;
            std::vector<std::size_t> prepared_rows;
            const std::string gpu = device.name() + " " + device.arch();
            for (std::size_t i = 0; i < variants.size(); ++i) {
                if (i % options.devices.size() != worker_index)
                    continue;
                SweepRow& row = result.rows[i];
                row.device = ordinal;
                CompileOptions co;
                co.arch = device.arch();
                co.toolkit_headers = true; // the key the Engine computes
                co.defines = variants[i].defines;
                engine.flags().apply_to(co.defines);
                row.key = sweep_row_key(spec, variants[i],
                                        make_cache_key(*sources, spec.kernel, co).hex(), gpu,
                                        options.seed);
                if (!options.no_cache && load_sweep_row(row))
                    continue;
                to_prepare.push_back(specs[i]);
                prepared_rows.push_back(i);
            }
            {
                std::lock_guard lock(result_mutex);
                result.provenance.gpu = device.name();
                result.provenance.arch = device.arch();
                result.provenance.tier = engine.flags().tier();
            }
            if (reference_spec && !prepared_rows.empty())
                to_prepare.push_back(*reference_spec);
            {
                std::lock_guard lock(result_mutex);
                total_to_measure += prepared_rows.size();
            }
            const auto prep = engine.prepare({}, to_prepare, options.progress);
            const Ceilings ceilings = measure_ceilings(device);
            {
                std::lock_guard lock(result_mutex);
                result.copy_gbps = ceilings.copy_gbps;
            }
            if (prepared_rows.empty())
                return;
            if (worker_index == 0)
                check_launch_types(spec, variants, prep, *sources, [&](std::size_t r) {
                    return r < prepared_rows.size() ? prepared_rows[r] : variants.size();
                });
            std::vector<const Function*> reference_functions;
            if (reference_spec) {
                require_reference(prep.back());
                reference_functions = step_functions(
                    reference->plan, [&](const std::string& entry) -> const Function& {
                        return engine.function(reference_spec->name, entry);
                    });
            }
            SweepMeasure measure(spec, variants, device, options.seed,
                                 reference ? &*reference : nullptr, reference_functions);
            std::vector<std::size_t> order(prepared_rows.size());
            for (std::size_t p = 0; p < order.size(); ++p)
                order[p] = p;
            std::stable_partition(order.begin(), order.end(),
                                  [&](std::size_t p) { return prepared_rows[p] == base; });
            for (std::size_t p : order) {
                SweepRow& row = result.rows[prepared_rows[p]];
                if (prep[p].error)
                    fail_if_unknown_entry(spec, variants[prepared_rows[p]], prep[p].error);
                try {
                    if (prep[p].error)
                        std::rethrow_exception(prep[p].error);
                    const std::string& name = to_prepare[p].name;
                    const std::vector<const Function*> functions = step_functions(
                        row.variant.plan, [&](const std::string& entry) -> const Function& {
                            return engine.function(name, entry);
                        });
                    measure.measure(row, functions, ceilings.copy_gbps);
                    if (!options.no_cache)
                        store_sweep_row(row);
                } catch (const std::exception& e) {
                    row.error = e.what();
                }
                if (options.measured) {
                    std::lock_guard lock(result_mutex);
                    options.measured(++measured, total_to_measure);
                }
            }
        } catch (...) {
            std::lock_guard lock(result_mutex);
            failure = std::current_exception();
        }
    };
    if (options.devices.size() == 1) {
        worker(0);
    } else {
        std::vector<std::thread> threads;
        for (std::size_t w = 0; w < options.devices.size(); ++w)
            threads.emplace_back(worker, w);
        for (auto& t : threads)
            t.join();
    }
    if (failure)
        std::rethrow_exception(failure);
    return result;
}

/// Appends `batch`'s rows to `into` (provenance and copy bandwidth from the latest batch).
void append_rows(SweepResult& into, SweepResult&& batch) {
    for (SweepRow& row : batch.rows)
        into.rows.push_back(std::move(row));
    into.provenance = batch.provenance;
    into.tuned_source = batch.tuned_source;
    into.copy_gbps = batch.copy_gbps;
}

/// The local search: from the start (the named baseline, else a random valid point), measure
/// every unevaluated valid neighbour of the fastest point that passed its check; move there
/// while one is faster; at a local minimum restart from a random unevaluated valid point; stop
/// after `budget` evaluations or when no valid point is left. A dry run compiles the start and
/// its neighbours: the path depends on the timings.
SweepResult run_local_search(const SweepSpec& spec, const SweepOptions& options) {
    SweepPoints points(spec);
    std::vector<SweepVariant> start = expand(spec);
    const SweepVariant baseline = start.front();
    const std::uint64_t size = *points.space().size();
    std::unordered_set<std::uint64_t> seen; // points planned: evaluated or dropped
    seen.insert(*points.index_of(baseline.params));
    SweepResult result = run_variants(spec, options, start, baseline);
    std::uint64_t current = *points.index_of(baseline.params);
    std::map<std::uint64_t, std::size_t> row_of{{current, 0}};
    // A point the path may move to: it ran and passed its check (judged after each batch).
    const auto passed = [&](std::size_t row) { return row_passed(result.rows[row]); };
    std::uint64_t state = spec.seed ^ 0x6C6F63616CULL; // "local": not the random search's draws
    while (result.rows.size() < spec.budget && seen.size() < size) {
        std::vector<SweepVariant> batch;
        std::vector<std::uint64_t> batch_index;
        for (std::uint64_t n : points.neighbours(current)) {
            if (result.rows.size() + batch.size() >= spec.budget)
                break;
            if (!seen.insert(n).second)
                continue;
            if (auto v = points.at(n)) {
                batch.push_back(std::move(*v));
                batch_index.push_back(n);
            }
        }
        bool moved = false;
        if (!batch.empty()) {
            append_rows(result, run_variants(spec, options, batch, baseline));
            if (options.dry_run)
                break;
            judge_sweep(spec, result);
            const std::size_t first = result.rows.size() - batch.size();
            for (std::size_t i = 0; i < batch.size(); ++i) {
                row_of[batch_index[i]] = first + i;
                const std::size_t cur = row_of.at(current);
                if (passed(first + i) &&
                    (!passed(cur) ||
                     result.rows[first + i].stats.median < result.rows[cur].stats.median)) {
                    current = batch_index[i];
                    moved = true;
                }
            }
        }
        if (moved || options.dry_run)
            continue;
        if (result.rows.size() >= spec.budget)
            break;
        // A local minimum: restart from a random valid point not seen yet.
        bool restarted = false;
        for (std::uint64_t tries = 0; tries < 1000 * spec.budget && seen.size() < size; ++tries) {
            const std::uint64_t i = draw_below(state, size);
            if (!seen.insert(i).second)
                continue;
            if (auto v = points.at(i)) {
                append_rows(result, run_variants(spec, options, {std::move(*v)}, baseline));
                judge_sweep(spec, result);
                row_of[i] = result.rows.size() - 1;
                current = i;
                restarted = true;
                break;
            }
        }
        if (!restarted)
            break;
    }
    result.rejected = points.rejected();
    return result;
}

} // namespace

SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const SweepSpace space(spec.params);
    SweepResult result;
    if (spec.strategy == SweepSpec::Strategy::local) {
        result = run_local_search(spec, options);
        result.search = "local: " + std::to_string(result.rows.size()) + " evaluated of " +
                        space.describe() + ", budget " + std::to_string(spec.budget) + ", seed " +
                        std::to_string(spec.seed);
    } else {
        std::size_t rejected = 0;
        const std::vector<SweepVariant> variants = expand(spec, &rejected);
        const SweepVariant& baseline = *std::find_if(
            variants.begin(), variants.end(), [](const SweepVariant& v) { return v.baseline; });
        result = run_variants(spec, options, variants, baseline);
        result.rejected = rejected;
        result.search = spec.strategy == SweepSpec::Strategy::random
                            ? "random: " + std::to_string(variants.size()) + " of " +
                                  space.describe() + ", seed " + std::to_string(spec.seed)
                            : "exhaustive: " + space.describe();
    }
    if (!options.dry_run)
        judge_sweep(spec, result);
    result.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
}

} // namespace kjit
