#include "lint/lint.hpp"

#include "jit/project.hpp"
#include "lint/rules.hpp"
#include "lint/rules_clang.hpp"
#include "lint/rules_text.hpp"
#include "lint/rules_walk.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace kjit::lint {

LintReport lint(const LintRequest& request) {
    LintReport report;
    const SourceSet& sources = *request.sources;
    // Without targets: every kernel and .cuh; any other header (.h, .hpp, ...) is linted when a
    // kernel includes it, since alone it may be host code.
    std::vector<const SourceFile*> files;
    if (request.targets.empty()) {
        for (const auto& f : sources.files())
            if (f.is_kernel() || f.name.ends_with(".cuh"))
                files.push_back(&f);
    } else {
        for (const auto& name : request.targets)
            if (const SourceFile* f = sources.find(name))
                files.push_back(f);
    }
    const std::set<std::string> reached = lint_walks(request, files, report.findings);
    for (const auto& name : reached)
        if (const SourceFile* f = sources.find(name);
            f && std::find(files.begin(), files.end(), f) == files.end())
            files.push_back(f);
    report.files = files.size();
    for (const SourceFile* f : files) {
        auto found = lint_text(*f);
        report.findings.insert(report.findings.end(), found.begin(), found.end());
    }
    if (request.clang) {
        lint_clang(request, files, report.findings, report.notes);
    } else {
        std::string ids;
        for (const auto& r : rules())
            if (r.needs_clang)
                ids += (ids.empty() ? "" : ", ") + std::string(r.id);
        report.notes.push_back(
            "clang rules (" + ids + ") skipped: " +
            (request.clang_missing.empty() ? "no libclang" : request.clang_missing));
    }
    auto& f = report.findings;
    std::sort(f.begin(), f.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return std::tie(a.path, a.line, a.column, a.rule, a.message) <
               std::tie(b.path, b.line, b.column, b.rule, b.message);
    });
    f.erase(std::unique(f.begin(), f.end()), f.end());
    return report;
}

LintReport lint_groups(const std::vector<SourceGroup>& groups, const LintRun& run) {
    const std::vector<Injection> explicit_injections = shape_injections(
        run.shape_files, groups.size() == 1 ? &groups.front().sources : nullptr);
    std::string why_not;
    const auto clang = Libclang::open(run.libclang, &why_not);
    LintReport all;
    for (const auto& g : groups) {
        const IncludeResolver resolver(g.sources, run.include_dirs);
        LintRequest request{&g.sources, g.targets, explicit_injections, clang.get(), why_not};
        request.resolver = &resolver;
        if (!run.archs.empty())
            request.archs = run.archs;
        if (run.shape_files.empty() && !g.dir.empty())
            request.injections = shape_injections(shape_files_beside(g.dir), &g.sources);
        request.injections.insert(request.injections.end(), run.contract_injections.begin(),
                                  run.contract_injections.end());
        auto report = lint(request);
        all.files += report.files;
        all.findings.insert(all.findings.end(), report.findings.begin(), report.findings.end());
        for (auto& n : report.notes)
            if (std::find(all.notes.begin(), all.notes.end(), n) == all.notes.end())
                all.notes.push_back(std::move(n));
    }
    return all;
}

} // namespace kjit::lint
