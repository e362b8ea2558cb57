#include "tools/verbs.hpp"

#include "core/names.hpp"

#include "kernels/launch_case.hpp"
#include "kernels/registry.hpp"
#include "runtime/context.hpp"
#include "tuning/case_arms.hpp"
#include "tuning/selfcheck.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

namespace kjit::cli {

namespace {
struct CheckArgs {
    SourceOptions sources;
    ShapeOptions shapes;
    CacheOptions cache;
    std::uint64_t seed = 1;
    int device = 0;
};

/// Widths of the table's text columns, wide enough for every case.
struct Columns {
    int entry = 5, shape = 5, defines = 7;
    explicit Columns(const std::vector<CheckCase>& cases) {
        for (const CheckCase& c : cases) {
            const CasePlan plan = check_plan(c);
            for (std::size_t o : plan.outputs)
                entry = std::max(entry, static_cast<int>(plan.entry().size() + 1 +
                                                         plan.buffers[o].name.size()));
            shape = std::max(shape, static_cast<int>(c.shape.size()));
            defines = std::max(defines, static_cast<int>(defines_text(check_defines(c)).size()));
        }
    }
};

/// A case whose define set failed to compile, where a contract file writes the define the
/// error names (the case's own, else a reference define for its reference's set, else the
/// contract's [defines]), else at the case's first define, else at its [[check]] table.
Diagnostic unprepared_case(const KernelContract& contract, const CheckCase& c,
                           const Defines& defines, bool reference,
                           const std::exception_ptr& error) {
    Diagnostic d;
    d.severity = Severity::error;
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        d.message = e.what();
    }
    // The engine names the define set as a kernel ("error: kernel 'row_softmax/A=1/B=2': ..."):
    // the case's own words say which it is.
    if (d.message.starts_with("error: "))
        d.message.erase(0, 7);
    if (const auto end = d.message.find("': ");
        d.message.starts_with("kernel '") && end != std::string::npos)
        d.message.erase(0, end + 3);
    // A step's entry that instantiates nothing (`blas::axpi`): the mistake is the step's entry.
    std::string step_entry;
    if (std::string problem = unknown_entry_problem(check_plan(c), d.message,
                                                    contract.source_name() + ".cu", step_entry);
        !problem.empty())
        d.message = std::move(problem);
    d.message = "case " + c.kernel + " " + c.shape + " " + defines_text(defines) +
                (reference ? " (its reference defines)" : "") +
                ": the define set does not compile: " + d.message;
    if (const auto w = contract.where.find(step_entry);
        !step_entry.empty() && w != contract.where.end()) {
        d.path = w->second.path;
        d.line = w->second.line;
        d.column = w->second.column;
        return d;
    }
    for (std::size_t k = 0; k < contract.check_shapes.size(); ++k) {
        const CheckShape& s = contract.check_shapes[k];
        if (s.shape != c.shape || s.defines != c.defines)
            continue;
        const std::string table = "[[check]] " + std::to_string(k + 1);
        auto place = [&](const std::string& key) {
            const auto w = contract.where.find(key);
            return w == contract.where.end() ? nullptr : &w->second;
        };
        // The define the error names: "define NAME ...", else " NAME " anywhere in it.
        const SourceLocation* at = nullptr;
        const auto named = [&] {
            for (const char* pre : {"define ", " "})
                for (const auto& [define, _] : defines)
                    if (d.message.find(std::string(pre) + define + " ") != std::string::npos)
                        return define;
            return std::string();
        }();
        if (!named.empty())
            for (const std::string& key : {reference ? "reference define " + named : "",
                                           table + " define " + named, "define " + named})
                if (!at && !key.empty())
                    at = place(key);
        if (!at && !s.defines.empty())
            at = place(table + " define " +
                       s.defines.front().substr(0, s.defines.front().find('=')));
        if (!at)
            at = place(table);
        if (at) {
            d.path = at->path;
            d.line = at->line;
            d.column = at->column;
        }
        break;
    }
    return d;
}

/// Prints each define set of `cases` that failed to prepare, once, as unprepared_case says;
/// returns how many.
int report_unprepared(const std::vector<CheckCase>& cases, const std::vector<PrepareRow>& rows) {
    std::set<std::string> failed;
    for (const CheckCase& c : cases) {
        const KernelContract& contract = kernel_contract(c.kernel);
        // The case's define set, then the one its reference runs with (check_specs).
        for (const bool reference : {false, true}) {
            const Defines defines = reference ? check_reference_defines(c) : check_defines(c);
            const std::string name = case_spec(contract, defines).name;
            const auto row = std::find_if(rows.begin(), rows.end(),
                                          [&](const PrepareRow& r) { return r.name == name; });
            if (row != rows.end() && row->error && failed.insert(name).second)
                std::printf(
                    "  %s\n",
                    unprepared_case(contract, c, defines, reference, row->error).format().c_str());
        }
    }
    return static_cast<int>(failed.size());
}

/// Each launch of every case's plan held against what its compile (`rows`) says of the entry
/// point (parameter count, sizes and kinds, launch bound), as its first launch would be and as
/// a sweep's dry run checks, then its arguments against the parameters' C++ types, which no
/// launch sees. Each problem printed at the contract's line where it has one; returns how many.
int report_plan_problems(const CheckArgs& args, const std::vector<CheckCase>& cases,
                         const std::vector<PrepareRow>& rows) {
    int problems = 0;
    for (const CheckCase& c : cases) {
        const KernelContract& contract = kernel_contract(c.kernel);
        const std::string name = case_spec(contract, check_defines(c)).name;
        const auto row = std::find_if(rows.begin(), rows.end(),
                                      [&](const PrepareRow& r) { return r.name == name; });
        if (row == rows.end() || !row->compiled)
            continue; // a failed compile, reported above
        const CasePlan plan = check_plan(c);
        const auto report = [&](const std::string& where_key, const std::string& problem) {
            ++problems;
            Diagnostic d;
            if (const auto w = contract.where.find(where_key); w != contract.where.end()) {
                d.path = w->second.path;
                d.line = w->second.line;
                d.column = w->second.column;
            }
            d.severity = Severity::error;
            d.message = "case " + c.kernel + " " + c.shape + " " + defines_text(check_defines(c)) +
                        ": " + problem;
            std::printf("  %s\n", d.format().c_str());
        };
        const int before = problems;
        for (std::size_t i = 0; i < plan.steps.size(); ++i) {
            if (plan.steps[i].kind != PipelineStep::Kind::launch)
                continue;
            std::string where_key;
            const std::string problem = step_launch_problem(
                plan, i, *row->compiled, contract.source_name() + ".cu", where_key);
            if (!problem.empty())
                report(where_key, "step " + std::to_string(i + 1) + " (" + plan.steps[i].entry +
                                      "): " + problem);
        }
        // The argument types the PTX does not tell, once the launches fit by it.
        std::string where_key;
        if (problems == before)
            if (const std::string problem = launch_type_problem(plan, args.sources.load(),
                                                                row->compiled->options, where_key);
                !problem.empty())
                report(where_key, problem);
    }
    return problems;
}

/// Without a GPU: every case's define set compiled (to check, nothing stored) and its plan
/// checked (report_plan_problems); returns how many problems.
int check_plans_without_device(const CheckArgs& args, const std::vector<CheckCase>& cases,
                               CheckSummary& summary) {
    EngineOptions options;
    options.cache = args.cache.settings();
    options.check_only = true;
    Engine engine(nullptr, options, args.sources.provider());
    const std::vector<PrepareRow> rows =
        engine.prepare({}, check_specs(cases), progress_line("compiling"));
    summary.unprepared += report_unprepared(cases, rows);
    return report_plan_problems(args, cases, rows);
}

int run_check(const CheckArgs& args) {
    // Its audit reads files on disk; the embedded kernels are kjit's own, never a user's.
    (void)args.sources.on_disk("kjit check");
    CheckSummary summary;
    const std::vector<std::string>& own = args.sources.register_contracts();
    summary.audit_passed = run_audit(args.sources, args.shapes, {}, args.cache) == kOk;
    // The cases of the project's contracts when its file names any; else of the registered
    // contracts whose kernel the sources hold (in a user's project kjit's own contracts,
    // rms_norm, ..., name kernels it does not have). Every case is planned first: a contract
    // mistake shows without a GPU too.
    const SourceSet& sources = args.sources.load();
    std::vector<CheckCase> cases;
    for (CheckCase& c : default_check_cases()) {
        const bool applies = own.empty()
                                 ? sources.find(kernel_contract(c.kernel).source_name() + ".cu") != nullptr
                                 : std::find(own.begin(), own.end(), c.kernel) != own.end();
        if (applies)
            cases.push_back(std::move(c));
    }
    // A project contract without a [[check]] case is checked by nothing.
    std::vector<std::string> unchecked;
    for (const std::string& name : own)
        if (std::none_of(cases.begin(), cases.end(),
                         [&](const CheckCase& c) { return c.kernel == name; }))
            unchecked.push_back(name);
    if (cases.empty() && !own.empty()) {
        std::printf("\nlaunch checks: the project's contracts (%s) declare no [[check]] case: "
                    "nothing would be launched or compared; add [[check]] cases "
                    "(docs/contracts.md)\n",
                    join(own).c_str());
        return kFindings;
    }
    for (const std::string& name : unchecked)
        std::printf("note: contract '%s' declares no [[check]] case: kjit check launches nothing "
                    "of it\n",
                    name.c_str());
    // A kernel no contract covers is compiled by the audit and never launched: said, so that a
    // pass is not read as covering it.
    std::vector<std::string> uncovered;
    for (const SourceFile* k : sources.kernels()) {
        const auto covers = [&](const std::string& contract) {
            return kernel_contract(contract).source_name() == k->kernel_name();
        };
        const bool covered = own.empty()
                                 ? std::any_of(cases.begin(), cases.end(),
                                               [&](const CheckCase& c) { return covers(c.kernel); })
                                 : std::any_of(own.begin(), own.end(), covers);
        if (!covered)
            uncovered.push_back(k->kernel_name());
    }
    if (!uncovered.empty() && (!cases.empty() || !own.empty()))
        std::printf("note: %zu kernel(s) without a contract, compiled by the audit but never "
                    "launched: %s (a contract file says how: docs/contracts.md)\n",
                    uncovered.size(), join(uncovered).c_str());
    if (cases.empty()) {
        std::printf("\nlaunch checks: no kernel contract names a kernel of the sources (%s): "
                    "nothing to launch\n",
                    args.sources.choice().text.c_str());
        return summary.passed() ? kOk : kFindings;
    }
    const Columns w(cases);
    std::string reason;
    if (!device_available(&reason)) {
        std::printf("\nlaunch plans of %zu check case(s), held against their compiled entry "
                    "points:\n", cases.size());
        const int problems = check_plans_without_device(args, cases, summary);
        std::printf("launch plans: %d problem(s), %d define set(s) failed to compile; launches "
                    "skipped: %s\n",
                    problems, summary.unprepared, reason.c_str());
        return summary.passed() && problems == 0 ? kOk : kFindings;
    }
    const Device device = Device::get(args.device);
    const Context context(device);
    EngineOptions options;
    options.cache = args.cache.settings();
    Engine engine(&context, options, args.sources.provider());
    const std::vector<PrepareRow> rows =
        engine.prepare({}, check_specs(cases), progress_line("specializing"));
    summary.unprepared += report_unprepared(cases, rows);
    if (summary.unprepared)
        return kFindings;
    // A mistake a launch would not refuse but run wrongly (an argument's C++ type) is shown
    // as what it is, not as an output far off its reference.
    if (const int problems = report_plan_problems(args, cases, rows)) {
        std::printf("launch plans: %d problem(s); nothing launched\n", problems);
        return kFindings;
    }
    std::printf("\nkjit check on %s (%s, %d SMs), inputs seed %llu\n", device.name().c_str(),
                device.arch().c_str(), device.sm_count(),
                static_cast<unsigned long long>(args.seed));
    std::printf("  %-*s %-*s %-*s %-13s %-10s %-11s %-10s %s\n", w.entry, "entry", w.shape, "shape",
                w.defines, "defines", "grid", "block", "rel L2 err", "tolerance", "result");
    for (const CheckCase& c : cases) {
        const CheckOutcome outcome = try_check_case(engine, c, args.seed);
        summary.add(outcome);
        if (!outcome.result) {
            std::printf("  %-*s %-*s %-*s FAIL: %s\n", w.entry, c.kernel.c_str(), w.shape,
                        c.shape.c_str(), w.defines, defines_text(check_defines(c)).c_str(),
                        outcome.error.c_str());
            continue;
        }
        const CheckResult& r = *outcome.result;
        // One line per output: entry/output, so every buffer the kernel writes is shown.
        for (const OutputCheck& o : r.outputs) {
            const std::string entry = r.entry + "/" + o.name;
            std::printf("  %-*s %-*s %-*s %-13s %-10s %-11.3g %-10.0e %s", w.entry, entry.c_str(),
                        w.shape, r.shape.c_str(), w.defines, r.defines.c_str(), r.grid.c_str(),
                        r.block.c_str(), o.error, o.tolerance, o.passed() ? "ok" : "FAIL");
            if (r.reference != "float64")
                std::printf(" (vs %s)", r.reference.c_str());
            if (o.unwritten)
                std::printf(" (%zu elements unwritten)", o.unwritten);
            std::printf("\n");
        }
    }
    std::printf("check: %d failed\n", summary.failed);
    return summary.passed() ? kOk : kFindings;
}
} // namespace

Action add_check(CLI::App& app) {
    auto args = std::make_shared<CheckArgs>();
    auto* sub = app.add_subcommand(
        "check", "kjit's main job: audit every kernel, then (with a GPU) launch each at its "
                 "contract's check shapes and compare every output with the float64 reference "
                 "(or the contract's reference defines)");
    args->sources.add_to(*sub);
    args->shapes.add_to(*sub);
    args->cache.add_to(*sub);
    sub->add_option("--seed", args->seed, "input generator seed")
        ->capture_default_str()
        ->check(seed_check());
    sub->add_option("--device", args->device, "device ordinal")->capture_default_str();
    return [args] { return run_check(*args); };
}

} // namespace kjit::cli
