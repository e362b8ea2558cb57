#include "tuning/sweep_judge.hpp"

#include <cstdio>
#include <string>

namespace kjit {

void judge_sweep(const SweepSpec& spec, SweepResult& result) {
    if (result.rows.empty())
        return;
    std::size_t base = 0;
    while (base + 1 < result.rows.size() && !result.rows[base].variant.baseline)
        ++base;
    const SweepRow& b = result.rows[base];
    for (auto& row : result.rows) {
        if (!row.error.empty()) {
            row.check = "FAILED";
            continue;
        }
        if (b.error.empty() && b.stats.median > 0)
            row.ratio = row.stats.median / b.stats.median;
        if (row.unwritten > 0) {
            row.check = "UNWRITTEN " + std::to_string(row.unwritten);
            continue;
        }
        if (spec.check == SweepSpec::Check::tolerance) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%.2e", row.error_vs_reference);
            bool within = row.error_vs_reference >= 0 && row.error_vs_reference <= spec.rtol;
            if (spec.atol >= 0) {
                within = within && row.max_abs_vs_reference >= 0 &&
                         row.max_abs_vs_reference <= spec.atol;
                std::snprintf(buf, sizeof buf, "%.2e max-abs %.2e", row.error_vs_reference,
                              row.max_abs_vs_reference);
            }
            row.check = (within ? "within tolerance " : "OUT OF TOLERANCE ") + std::string(buf);
            continue;
        }
        if (spec.check != SweepSpec::Check::digest) {
            row.check = "-";
            continue;
        }
        if (!b.error.empty()) {
            row.check = "no baseline";
            continue;
        }
        if (row.digests == b.digests) {
            row.check = "IDENTICAL";
            continue;
        }
        row.check = "DIFFERS";
        for (std::size_t o = 0; o < row.digests.size() && o < b.digests.size(); ++o)
            if (row.digests[o] != b.digests[o])
                row.check += " (" + row.digests[o].first + ")";
    }
}

bool row_passed(const SweepRow& row) {
    return row.error.empty() && (row.check == "IDENTICAL" || row.check == "-" ||
                                 row.check.starts_with("within tolerance"));
}

int failed_rows(const SweepResult& result, bool dry_run) {
    int failed = 0;
    for (const SweepRow& row : result.rows)
        failed += (dry_run ? row.error.empty() : row_passed(row)) ? 0 : 1;
    return failed;
}

} // namespace kjit
