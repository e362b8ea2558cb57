#include "tuning/abba.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cstdio>

namespace kjit {

std::string abba_order(int pairs) {
    if (pairs < 1)
        throw ConfigError("an ABBA run needs at least one pair (got " + std::to_string(pairs) +
                          ")");
    std::string order;
    for (int p = 0; p < pairs; ++p)
        order += p % 2 ? "BA" : "AB";
    return order;
}

AbbaResult summarize_abba(int pairs, std::vector<Stats> a_blocks, std::vector<Stats> b_blocks) {
    if (a_blocks.size() != static_cast<std::size_t>(pairs) || b_blocks.size() != a_blocks.size())
        throw Error("ABBA summary: " + std::to_string(pairs) + " pairs but " +
                    std::to_string(a_blocks.size()) + " A and " + std::to_string(b_blocks.size()) +
                    " B blocks");
    AbbaResult r;
    r.order = abba_order(pairs);
    std::vector<double> all_a, all_b, ratios;
    for (int p = 0; p < pairs; ++p) {
        all_a.insert(all_a.end(), a_blocks[p].samples.begin(), a_blocks[p].samples.end());
        all_b.insert(all_b.end(), b_blocks[p].samples.begin(), b_blocks[p].samples.end());
        ratios.push_back(a_blocks[p].median > 0 ? b_blocks[p].median / a_blocks[p].median : 0.0);
    }
    r.a = Stats::of(all_a);
    r.b = Stats::of(all_b);
    r.ratio = Stats::of(ratios);
    r.a_blocks = std::move(a_blocks);
    r.b_blocks = std::move(b_blocks);
    return r;
}

AbbaResult run_abba(Bench& bench, const AbbaArm& a, const AbbaArm& b, int pairs) {
    const std::string order = abba_order(pairs);
    std::vector<Stats> a_blocks, b_blocks;
    for (char arm : order)
        (arm == 'A' ? a_blocks : b_blocks).push_back(bench.run(arm == 'A' ? a.launch : b.launch));
    return summarize_abba(pairs, std::move(a_blocks), std::move(b_blocks));
}

std::string format_abba(const AbbaResult& r, const AbbaArm& a, const AbbaArm& b) {
    std::string out;
    out += "  A = " + a.label + "   " + a.provenance.text() + "\n";
    out += "  B = " + b.label + "   " + b.provenance.text() + "\n";
    out += "  order " + r.order + " (" + std::to_string(r.a_blocks.size()) + " pairs x " +
           std::to_string(r.a.samples.size() / std::max<std::size_t>(r.a_blocks.size(), 1)) +
           " reps)\n";
    std::size_t ia = 0, ib = 0;
    for (std::size_t i = 0; i < r.order.size(); ++i) {
        const bool is_a = r.order[i] == 'A';
        const Stats& s = is_a ? r.a_blocks[ia++] : r.b_blocks[ib++];
        char head[64];
        std::snprintf(head, sizeof head, "  run %zu %c reps ms: ", i + 1, r.order[i]);
        char tail[64];
        std::snprintf(tail, sizeof tail, "  (median %.*f)", s.digits(), s.median);
        out += head + s.samples_text() + tail + "\n";
    }
    out += "  A: " + r.a.summary() + "\n";
    out += "  B: " + r.b.summary() + "\n";
    char line[256];
    std::snprintf(line, sizeof line,
                  "  ratio B/A %.4f (per pair: %s; spread %.2f%%, range %.4f..%.4f)\n",
                  r.ratio.median, r.ratio.samples_text().c_str(), 100 * r.ratio.relative_spread(),
                  r.ratio.min, r.ratio.max);
    out += line;
    return out;
}

} // namespace kjit
