#include "jit/audit.hpp"

#include <algorithm>
#include <system_error>

namespace kjit {

std::vector<AuditCompile> audit_compiles(const SourceSet& sources,
                                         std::span<const ProductionDefines> production,
                                         std::span<const std::string> archs) {
    std::vector<AuditCompile> out;
    for (const auto* k : sources.kernels()) {
        std::vector<std::pair<std::string, std::map<std::string, std::string>>> sets{
            {k->kernel_name(), {}}};
        for (const ProductionDefines& p : production)
            if (p.source == k->kernel_name() &&
                std::none_of(sets.begin(), sets.end(),
                             [&](const auto& s) { return s.second == p.defines; }))
                sets.emplace_back(p.name, p.defines);
        for (const auto& [label, defines] : sets)
            for (const std::string& arch : archs) {
                AuditCompile c{label, {}, {k->kernel_name(), {}}};
                c.request.options.arch = arch;
                c.request.options.toolkit_headers = true;
                // Start-up names the instantiations of a file of templates, not the audit.
                c.request.options.templates_later = true;
                c.request.options.defines = defines;
                c.defines = defines.empty() ? "(defaults)" : c.request.options.defines_text();
                out.push_back(std::move(c));
            }
    }
    return out;
}

const char* freshness_name(AuditFreshness fresh) {
    switch (fresh) {
    case AuditFreshness::up_to_date:
        return "up to date";
    case AuditFreshness::stale:
        return "stale";
    case AuditFreshness::skipped:
        break;
    }
    return "skipped";
}

} // namespace kjit
