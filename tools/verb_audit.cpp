#include "tools/verbs.hpp"

#include "jit/audit.hpp"
#include "jit/define_use.hpp"
#include "jit/include_resolver.hpp"
#include "jit/shape_file.hpp"
#include "jit/tuned_table.hpp"
#include "kernels/plan.hpp"
#include "kernels/registry.hpp"
#include "lint/injections.hpp"
#include "lint/lint.hpp"
#include "lint/report.hpp"
#include "tuning/sweep_runner.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace kjit::cli {

namespace {
struct AuditArgs {
    SourceOptions sources;
    ShapeOptions shapes;
    CacheOptions cache;
    std::vector<std::string> archs;
};
} // namespace

int run_audit(const SourceOptions& sources, const ShapeOptions& shapes,
              const std::vector<std::string>& arch_option, const CacheOptions& cache_options) {
    const SourceChoice& choice = sources.choice();
    const SourceSet& set = sources.load();
    require_kernels(set, choice);
    // Every shape file is read against the sources, fail closed: one that does not parse, names
    // a kernel the sources lack or a `${}` the shape lacks stops the audit at its file:line:col.
    const std::vector<std::filesystem::path> shape_files = shapes.choose(sources);
    const std::vector<lint::Injection> injections = lint::shape_injections(shape_files, &set);
    std::vector<ProductionDefines> production;
    for (const lint::Injection& inj : injections)
        production.push_back(
            {inj.spec, inj.source, inj.defines, inj.instantiations, inj.instantiations_where});
    // The project's sweep files are read fail closed too (with the contracts they name): one
    // that does not parse or names what its contract lacks stops the audit as it stops
    // `kjit sweep`; a define its kernel never reads is a finding, reported after the lint
    // (whose findings may be its cause: a default #defined with no guard).
    std::vector<std::string> sweep_lines;
    if (const Project* p = sources.project_file()) {
        (void)sources.register_contracts();
        for (const ProjectPath& f : p->sweep_files) {
            const SweepSpec spec = SweepSpec::load(display_path(f.path));
            try {
                check_sweep_defines_read(spec, set);
            } catch (const ConfigError& e) {
                sweep_lines.emplace_back(e.what());
            }
        }
    }
    // The tuned tables (the project's and those its shape files name): each entry is a
    // production define set too, compiled below; one recorded for another version of its
    // kernel, or with a define the kernel never reads, would go wrong at start-up.
    std::vector<std::filesystem::path> tables;
    std::vector<std::string> tuned_lines;
    std::size_t tuned_findings = 0;
    if (const Project* p = sources.project_file(); p && p->tuned) {
        // kjit tune creates the project's table; until then an audit that passed would say the
        // tuned entries were checked. (A shape file's missing table stops ShapeFile::load.)
        std::error_code ec;
        if (std::filesystem::is_regular_file(p->tuned->path, ec)) {
            tables.push_back(std::filesystem::weakly_canonical(p->tuned->path));
        } else {
            const SourceLocation& at = p->tuned->where;
            tuned_lines.push_back(
                Diagnostic{at.path, at.line, at.column, Severity::error,
                           "the tuned table " + p->tuned->text +
                               (std::filesystem::exists(p->tuned->path, ec)
                                    ? " is not a file: correct `tuned`"
                                    : " does not exist: kjit tune writes it (an empty file is "
                                      "an empty table), or correct `tuned`"),
                           ""}
                    .format());
            ++tuned_findings;
        }
    }
    for (const auto& f : shape_files)
        if (const ShapeFile sf = ShapeFile::load(f); sf.tuned)
            tables.push_back(std::filesystem::weakly_canonical(sf.tuned->file));
    std::sort(tables.begin(), tables.end());
    tables.erase(std::unique(tables.begin(), tables.end()), tables.end());
    for (const auto& path : tables) {
        const TunedTable table = TunedTable::load(display_path(path));
        std::vector<Diagnostic> found = stale_tuned_entries(table, set);
        for (Diagnostic& d : idle_tuned_buckets(table, set))
            found.push_back(std::move(d));
        for (const TunedEntry& e : table.entries) {
            if (!set.find(e.kernel + ".cu"))
                continue;
            const std::string where = display_path(path) + ":" + std::to_string(e.where.line);
            production.push_back({e.kernel + " (tuned " + where + ")", e.kernel, e.defines});
            // The entry's launch at its shape, as its contract plans it: a define set that
            // breaks a precondition there (SPLIT_K=3 where cols % SPLIT_K must be 0) would be
            // injected at start-up and launched wrong.
            if (const KernelContract* c = find_contract(e.contract_name());
                c && e.shape.size() == c->shape_keys.size() &&
                std::ranges::all_of(c->shape_keys,
                                    [&](const std::string& k) { return e.shape.contains(k); })) {
                try {
                    (void)plan_case(*c, e.shape,
                                    e.dtype.empty() ? c->dtypes.front() : parse_dtype(e.dtype),
                                    e.defines);
                } catch (const PreconditionError& x) {
                    found.push_back({e.where.path, e.where.line, e.where.column, Severity::error,
                                     "tuned entry for " + e.contract_name() + " " +
                                         tuned_shape_text(e.shape) + " " + defines_text(e.defines) +
                                         " breaks its contract there: " + x.message,
                                     ""});
                } catch (const std::exception&) {
                    // A dtype the contract lacks, a bad value: the compile below says it.
                }
            }
            std::map<std::string, SourceLocation> places;
            for (const auto& [name, _] : e.defines)
                places[name] = e.where;
            for (Diagnostic& d : unread_define_diagnostics(set, set.kernel(e.kernel),
                                                           production.back().name, places,
                                                           e.defines, Severity::error))
                found.push_back(std::move(d));
        }
        tuned_findings += found.size();
        for (const Diagnostic& d : found)
            tuned_lines.push_back(d.format());
        tuned_lines.push_back("tuned: " + display_path(path) + ": " +
                              std::to_string(table.entries.size()) + " entr" +
                              (table.entries.size() == 1 ? "y" : "ies") + ", " +
                              std::to_string(found.size()) + " finding(s)");
    }
    std::vector<std::string> archs = arch_option;
    if (archs.empty() && sources.project_file())
        archs = sources.project_file()->archs;
    if (archs.empty())
        archs = {"sm_90"};
    std::vector<AuditCompile> compiles = audit_compiles(set, production, archs);
    for (AuditCompile& c : compiles)
        for (const auto& dir : choice.include_dirs)
            c.request.options.include_dirs.push_back(dir.string());

    std::string arch_list;
    for (const auto& a : archs)
        arch_list += (arch_list.empty() ? "" : ",") + a;
    std::printf("kjit audit: %zu kernel(s) %s, NVRTC %d.%d, arch %s\n", set.kernels().size(),
                sources.describe().c_str(), nvrtc_version() / 1000, nvrtc_version() % 1000 / 10,
                arch_list.c_str());
    // A project that reads no shape file audits its kernels' defaults alone: said, and a
    // finding when a shape file lies elsewhere in the project unnamed.
    std::vector<std::string> shape_lines;
    if (const Project* p = sources.project_file(); p && shape_files.empty()) {
        const std::string beside = choice.on_disk() ? display_path(choice.dir) + "/" : "";
        const std::string why = display_path(p->file) + " names no shape_files" +
                                (beside.empty() ? "" : " and " + beside + " holds none");
        const std::vector<std::filesystem::path> unnamed = shape_files_under(p->file.parent_path());
        if (unnamed.empty())
            std::printf("shapes: none read (%s): each kernel is compiled with its defaults "
                        "only\n",
                        why.c_str());
        for (const auto& f : unnamed)
            shape_lines.push_back(
                Diagnostic{display_path(p->file), 0, 0, Severity::error,
                           display_path(f) +
                               " declares [[kernel]] tables, but no shape file is "
                               "read (" +
                               why +
                               "): its production define sets "
                               "are not audited; add shape_files = [\"" +
                               f.lexically_relative(p->file.parent_path()).generic_string() + "\"]",
                           ""}
                    .format());
    }
    std::fflush(stdout);

    // Lint and freshness first: a stale binary or a cut macro explains a compile failure.
    std::string why_not;
    const auto clang = lint::Libclang::open({}, &why_not);
    // Linted as compiled: the same include directories and target architectures.
    const IncludeResolver resolver(set, choice.include_dirs);
    // The contracts' define sets too: a name only a contract injects is no KJ003 finding.
    std::vector<lint::Injection> lint_injections = injections;
    for (lint::Injection& inj : sources.contract_injections())
        lint_injections.push_back(std::move(inj));
    lint::LintRequest lint_request{&set, {}, lint_injections, clang.get(), why_not};
    lint_request.resolver = &resolver;
    lint_request.archs = archs;
    lint::LintReport report = lint::lint(lint_request);
    const std::string lint_notes = lint::format_notes(report.notes);
    const std::string lint_text = lint::format_report(report, false);
    std::fwrite(lint_notes.data(), 1, lint_notes.size(), stderr);
    std::fwrite(lint_text.data(), 1, lint_text.size(), stdout);
    std::fflush(stdout);
    AuditSummary summary;
    summary.findings = report.findings.size();
    // The project's contract files: a [defines] entry the kernel never reads is injected into
    // every case and sweep variant for nothing, a [[check]] case's into that case (with
    // KJIT_ALLOW_UNREAD_DEFINES, as at a compile, a warning that does not fail the audit).
    const bool allow = process_flags().get_bool(kFlagAllowUnreadDefines);
    for (const std::string& name : sources.register_contracts()) {
        const KernelContract& contract = kernel_contract(name);
        std::vector<Diagnostic> found = unread_contract_defines(contract, set);
        for (Diagnostic& d : unread_check_defines(contract, set))
            found.push_back(std::move(d));
        for (Diagnostic& d : found) {
            d.severity = allow ? Severity::warning : Severity::error;
            std::printf("%s\n", d.format().c_str());
            summary.contract_findings += allow ? 0 : 1;
        }
    }
    // The project's binaries when it names them, else this kjit's own copies when it embeds them.
    const std::vector<FreshBinary> binaries = fresh_binaries(sources, {});
    std::optional<std::string> skip =
        binaries.empty() ? audit_freshness_skip(choice, SourceSet::embedded()) : std::nullopt;
    // A fresh clone audits before it builds: a binary not built yet is not compared.
    for (const FreshBinary& b : binaries) {
        std::error_code ec;
        if (!skip && !std::filesystem::exists(b.path, ec))
            skip = display_path(b.path) + " is not built";
    }
    if (skip) {
        std::printf("fresh: skipped (%s)\n", skip->c_str());
    } else {
        summary.fresh = check_fresh(choice, set, binaries) == kOk ? AuditFreshness::up_to_date
                                                                  : AuditFreshness::stale;
    }
    std::fflush(stdout);
    for (const std::string& line : tuned_lines)
        std::printf("%s\n", line.c_str());
    summary.stale_tuned = tuned_findings;
    for (const std::string& line : sweep_lines)
        std::printf("%s\n", line.c_str());
    summary.sweep_findings = sweep_lines.size();
    for (const std::string& line : shape_lines)
        std::printf("%s\n", line.c_str());
    summary.shape_findings = shape_lines.size();
    std::fflush(stdout);

    std::vector<CompileRequest> requests;
    for (const AuditCompile& c : compiles)
        requests.push_back(c.request);
    CompileCache cache(cache_options.settings());
    const auto results = cache.get_all(set, requests, progress_line("compiling"));
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        const AuditCompile& c = compiles[i];
        const std::string& arch = c.request.options.arch;
        if (r.compiled) {
            ++summary.compiled;
            // The cache key, not the kernel file's hash: it covers what the file includes, the
            // defines and the options, so two lines differ where their compiles do.
            std::printf("  ok    %-16s %-7s %8.1f ms  cubin %6.1f KiB  key %.12s  %s%s\n",
                        c.label.c_str(), arch.c_str(), r.compiled->compile_ms,
                        r.compiled->cubin.size() / 1024.0, r.key.hex().c_str(),
                        c.defines.c_str(), r.origin == Origin::disk ? " (cached)" : "");
            continue;
        }
        ++summary.failed;
        std::printf("  FAIL  %-16s %-7s %s\n", c.label.c_str(), arch.c_str(), c.defines.c_str());
        std::fflush(stdout);
        try {
            std::rethrow_exception(r.error);
        } catch (const CompileError& e) {
            if (e.diagnostics.empty())
                std::cerr << e.log << '\n';
            for (const auto& d : e.diagnostics)
                std::cerr << d.format() << '\n';
            std::cerr << "  defines: " << c.request.options.defines_text() << '\n';
            if (!c.request.options.name_expressions.empty())
                std::cerr << "  " << c.instantiations_where.path << ':'
                          << c.instantiations_where.line << ": the instantiations " << c.label
                          << " names, compiled as start-up compiles them\n";
        } catch (const std::exception& e) {
            std::cerr << "  " << e.what() << '\n';
        }
    }
    std::printf(
        "audit: %zu compiled, %zu failed; lint: %zu finding(s); fresh: %s%s%s%s%s\n",
        summary.compiled, summary.failed, summary.findings, freshness_name(summary.fresh),
        summary.contract_findings == 0
            ? ""
            : ("; contracts: " + std::to_string(summary.contract_findings) + " finding(s)").c_str(),
        tables.empty() && tuned_findings == 0
            ? ""
            : ("; tuned: " + std::to_string(summary.stale_tuned) + " finding(s)").c_str(),
        summary.sweep_findings == 0
            ? ""
            : ("; sweeps: " + std::to_string(summary.sweep_findings) + " finding(s)").c_str(),
        summary.shape_findings == 0
            ? ""
            : ("; shapes: " + std::to_string(summary.shape_findings) + " finding(s)").c_str());
    return summary.passed() ? kOk : kFindings;
}

Action add_audit(CLI::App& app) {
    auto args = std::make_shared<AuditArgs>();
    auto* sub = app.add_subcommand(
        "audit", "lint, check freshness, then compile every kernel with its defaults and with each "
                 "production define set, for each target arch (no GPU needed)");
    args->sources.add_to(*sub);
    args->shapes.add_to(*sub);
    args->cache.add_to(*sub);
    sub->add_option("--arch", args->archs,
                    "target architectures (default: the project file's archs, else sm_90)")
        ->check(arch_check());
    return [args] {
        (void)args->sources.on_disk("kjit audit");
        return run_audit(args->sources, args->shapes, args->archs, args->cache);
    };
}

} // namespace kjit::cli
