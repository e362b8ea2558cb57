#include "lint/lint.hpp"

#include "lint/rules.hpp"
#include "lint/rules_clang.hpp"
#include "lint/rules_text.hpp"

#include <algorithm>
#include <tuple>

namespace kjit::lint {

LintReport lint(const LintRequest& request) {
    LintReport report;
    const SourceSet& sources = *request.sources;
    std::vector<const SourceFile*> files;
    if (request.targets.empty()) {
        for (const auto& f : sources.files())
            files.push_back(&f);
    } else {
        for (const auto& name : request.targets)
            if (const SourceFile* f = sources.find(name))
                files.push_back(f);
    }
    report.files = files.size();
    for (const SourceFile* f : files) {
        auto found = lint_text(*f, sources);
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

} // namespace kjit::lint
