#pragma once
// What `kjit audit` compiles and how it judges the outcome: every kernel with its defaults and
// with each production define set the shape files inject, for each target arch, beside the
// linter's findings and the freshness of the embedded sources.

#include "jit/compile_cache.hpp"
#include "jit/sources.hpp"

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace kjit {

/// A production define set: a shape file's `[[kernel]]` with its defines resolved.
struct ProductionDefines {
    std::string name;   ///< the shape file's name for the kernel ("rms_norm_prefill")
    std::string source; ///< the kernel it compiles ("rms_norm")
    std::map<std::string, std::string> defines;
    /// The template instantiations start-up names (NVRTC name expressions), and where: a set
    /// that names any is compiled with them, as start-up compiles it.
    std::vector<std::string> instantiations{};
    SourceLocation instantiations_where{};
};

/// One compile of an audit.
struct AuditCompile {
    std::string label;   ///< the kernel, or the shape file's name for the define set
    std::string defines; ///< "(defaults)", or the defines as the compiler gets them
    CompileRequest request;
    SourceLocation instantiations_where{}; ///< of the request's name expressions, if any
};

/// Every kernel of `sources` with its defaults, then with each production define set of it
/// (each distinct set of defines and instantiations once, in the order given), each for every
/// arch of `archs`.
std::vector<AuditCompile> audit_compiles(const SourceSet& sources,
                                         std::span<const ProductionDefines> production,
                                         std::span<const std::string> archs);

/// How the audit's freshness check came out.
enum class AuditFreshness { up_to_date, stale, skipped };

/// The outcome of an audit: it passes when every compile succeeded, the linter found nothing
/// and the embedded sources are not stale.
struct AuditSummary {
    std::size_t compiled = 0; ///< compiles that succeeded
    std::size_t failed = 0;   ///< compiles that failed
    std::size_t findings = 0; ///< the linter's findings
    AuditFreshness fresh = AuditFreshness::skipped;
    /// Tuned-table findings: an entry recorded for another source, naming a kernel the
    /// sources lack, or injecting a define its kernel never reads.
    std::size_t stale_tuned = 0;
    /// The project's contract files' [defines] and [[check]] defines their kernel never reads.
    std::size_t contract_findings = 0;
    /// The project's sweep files' defines their kernel never reads (or #defines again).
    std::size_t sweep_findings = 0;
    /// Shape files under the project's directory when it reads none (shape_files_under).
    std::size_t shape_findings = 0;
    [[nodiscard]] bool passed() const {
        return failed == 0 && findings == 0 && fresh != AuditFreshness::stale && stale_tuned == 0 &&
               contract_findings == 0 && sweep_findings == 0 && shape_findings == 0;
    }
};

/// "up to date", "stale" or "skipped".
const char* freshness_name(AuditFreshness fresh);

} // namespace kjit
