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
                c.request.options.defines = defines;
                c.defines = defines.empty() ? "(defaults)" : c.request.options.defines_text();
                out.push_back(std::move(c));
            }
    }
    return out;
}

std::optional<std::string> freshness_skip_reason(const std::string& sources_dir,
                                                 const std::filesystem::path& kernel_dir) {
    if (!sources_dir.empty())
        return "sources read from " + sources_dir + ", not embedded";
    std::error_code ec;
    if (!std::filesystem::is_directory(kernel_dir, ec))
        return "no kernel directory at " + kernel_dir.string();
    return std::nullopt;
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
