#include "jit/audit.hpp"

#include <algorithm>
#include <system_error>

namespace kjit {

std::vector<AuditCompile> audit_compiles(const SourceSet& sources,
                                         std::span<const ProductionDefines> production,
                                         std::span<const std::string> archs) {
    std::vector<AuditCompile> out;
    for (const auto* k : sources.kernels()) {
        std::vector<ProductionDefines> sets{{k->kernel_name(), k->kernel_name(), {}}};
        for (const ProductionDefines& p : production)
            if (p.source == k->kernel_name() &&
                std::none_of(sets.begin(), sets.end(), [&](const ProductionDefines& s) {
                    return s.defines == p.defines && s.instantiations == p.instantiations;
                }))
                sets.push_back(p);
        for (const ProductionDefines& set : sets)
            for (const std::string& arch : archs) {
                AuditCompile c{set.name, {}, {k->kernel_name(), {}}, set.instantiations_where};
                c.request.options.arch = arch;
                c.request.options.toolkit_headers = true;
                // Start-up names the instantiations of a file of templates; a set that names
                // none leaves them to start-up.
                c.request.options.templates_later = true;
                c.request.options.name_expressions = set.instantiations;
                c.request.options.defines = set.defines;
                c.defines = set.defines.empty() ? "(defaults)" : c.request.options.defines_text();
                for (std::size_t i = 0; i < set.instantiations.size(); ++i)
                    c.defines += (i == 0 ? "  [" : ", ") + set.instantiations[i] +
                                 (i + 1 == set.instantiations.size() ? "]" : "");
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
