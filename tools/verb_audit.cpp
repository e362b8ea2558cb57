#include "tools/verbs.hpp"

#include "lint/injections.hpp"
#include "lint/lint.hpp"
#include "lint/report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace kjit::cli {

namespace {
struct AuditArgs {
    SourceOptions sources;
    CacheOptions cache;
    std::vector<std::string> archs{"sm_90"};
};

// One compile of the audit: a kernel with its defaults, or with a shape file's production set.
struct AuditCompile {
    std::string label; // the kernel, or the shape file's name for it
    std::string defines;
};

} // namespace

int run_audit(const SourceOptions& sources, const std::vector<std::string>& archs,
              const CacheOptions& cache_options) {
    const SourceSet set = sources.load();
    const std::string kernel_dir = sources.dir.empty() ? KJIT_DEFAULT_KERNEL_DIR : sources.dir;
    std::error_code ec;
    const bool have_dir = std::filesystem::is_directory(kernel_dir, ec);
    std::vector<std::string> notes;
    const std::vector<lint::Injection> injections =
        have_dir ? lint::find_injections(kernel_dir, &notes) : std::vector<lint::Injection>{};

    std::vector<CompileRequest> requests;
    std::vector<AuditCompile> labels;
    for (const auto* k : set.kernels()) {
        std::vector<std::pair<std::string, std::map<std::string, std::string>>> sets{
            {k->kernel_name(), {}}};
        for (const auto& inj : injections)
            if (inj.source == k->kernel_name() &&
                std::none_of(sets.begin(), sets.end(),
                             [&](const auto& s) { return s.second == inj.defines; }))
                sets.emplace_back(inj.spec, inj.defines);
        for (const auto& [label, defines] : sets)
            for (const auto& arch : archs) {
                CompileRequest r{k->kernel_name(), {}};
                r.options.arch = arch;
                r.options.defines = defines;
                labels.push_back(
                    {label, defines.empty() ? "(defaults)" : r.options.defines_text()});
                requests.push_back(std::move(r));
            }
    }
    std::string arch_list;
    for (const auto& a : archs)
        arch_list += (arch_list.empty() ? "" : ",") + a;
    std::printf("kjit audit: %zu kernel(s) %s, NVRTC %d.%d, arch %s\n", set.kernels().size(),
                sources.describe().c_str(), nvrtc_version() / 1000, nvrtc_version() % 1000 / 10,
                arch_list.c_str());
    std::fflush(stdout);

    // Lint and freshness first: a stale binary or a cut macro explains a compile failure.
    std::string why_not;
    const auto clang = lint::Libclang::open({}, &why_not);
    lint::LintReport report = lint::lint({&set, {}, injections, clang.get(), why_not});
    report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
    const std::string lint_notes = lint::format_notes(report.notes);
    const std::string lint_text = lint::format_report(report, false);
    std::fwrite(lint_notes.data(), 1, lint_notes.size(), stderr);
    std::fwrite(lint_text.data(), 1, lint_text.size(), stdout);
    std::fflush(stdout);
    int stale = kOk;
    if (!sources.dir.empty())
        std::printf("fresh: skipped (sources read from %s, not embedded)\n", sources.dir.c_str());
    else if (!have_dir)
        std::printf("fresh: skipped (no kernel directory at %s)\n", kernel_dir.c_str());
    else
        stale = print_fresh(check_freshness(kernel_dir), kernel_dir);
    std::fflush(stdout);

    CompileCache cache(cache_options.settings());
    const auto results = cache.get_all(set, requests, progress_line("compiling"));
    int failed = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        const std::string& arch = requests[i].options.arch;
        if (r.compiled) {
            std::printf("  ok    %-16s %-7s %8.1f ms  cubin %6.1f KiB  hash %.12s  %s%s\n",
                        labels[i].label.c_str(), arch.c_str(), r.compiled->compile_ms,
                        r.compiled->cubin.size() / 1024.0, r.compiled->source_hash.hex().c_str(),
                        labels[i].defines.c_str(), r.origin == Origin::disk ? " (cached)" : "");
            continue;
        }
        ++failed;
        std::printf("  FAIL  %-16s %-7s %s\n", labels[i].label.c_str(), arch.c_str(),
                    labels[i].defines.c_str());
        std::fflush(stdout);
        try {
            std::rethrow_exception(r.error);
        } catch (const CompileError& e) {
            if (e.diagnostics.empty())
                std::cerr << e.log << '\n';
            for (const auto& d : e.diagnostics)
                std::cerr << d.format() << '\n';
            std::cerr << "  defines: " << requests[i].options.defines_text() << '\n';
        } catch (const std::exception& e) {
            std::cerr << "  " << e.what() << '\n';
        }
    }
    std::printf("audit: %zu compiled, %d failed; lint: %zu finding(s); fresh: %s\n",
                results.size() - failed, failed, report.findings.size(),
                stale != kOk                      ? "stale"
                : sources.dir.empty() && have_dir ? "up to date"
                                                  : "skipped");
    return failed || !report.findings.empty() || stale != kOk ? kFindings : kOk;
}

Action add_audit(CLI::App& app) {
    auto args = std::make_shared<AuditArgs>();
    auto* sub = app.add_subcommand(
        "audit", "lint, check freshness, then compile every kernel with its defaults and with each "
                 "production define set, for each target arch (no GPU needed)");
    args->sources.add_to(*sub);
    args->cache.add_to(*sub);
    sub->add_option("--arch", args->archs, "target architectures")->capture_default_str();
    return [args] { return run_audit(args->sources, args->archs, args->cache); };
}

} // namespace kjit::cli
