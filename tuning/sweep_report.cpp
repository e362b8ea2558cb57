#include "tuning/sweep_report.hpp"

#include "core/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace kjit {

namespace fs = std::filesystem;

std::string sweep_table(const SweepSpec& spec, const SweepResult& result) {
    std::vector<const SweepRow*> rows;
    for (const auto& r : result.rows)
        rows.push_back(&r);
    std::stable_sort(rows.begin(), rows.end(), [](const SweepRow* a, const SweepRow* b) {
        if (a->error.empty() != b->error.empty())
            return a->error.empty();
        return a->stats.median < b->stats.median;
    });
    std::ostringstream os;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%-28s %3s %-14s %-12s %5s %9s %6s %6s %10s %7s %8s %6s %7s  %s\n", "variant",
                  "dev", "grid", "block", "regs", "blocks/SM", "waves", "SMs", "median us",
                  "spread", "GB/s", "copy", "ratio", "check");
    os << buf;
    for (const SweepRow* r : rows) {
        std::string label = r->variant.label() + (r->variant.baseline ? " *" : "");
        if (!r->error.empty()) {
            std::snprintf(buf, sizeof buf, "%-28s %3d %-14s %-12s FAILED: %s\n", label.c_str(),
                          r->device, r->variant.grid.str().c_str(), r->variant.block.str().c_str(),
                          r->error.substr(0, 160).c_str());
            os << buf;
            continue;
        }
        std::snprintf(buf, sizeof buf,
                      "%-28s %3d %-14s %-12s %5d %9d %6.2f %5.1f%% %10.2f %6.1f%% %8.1f %5.1f%% "
                      "%7.3f  %s%s\n",
                      label.c_str(), r->device, r->variant.grid.str().c_str(),
                      r->variant.block.str().c_str(), r->registers, r->blocks_per_sm, r->waves,
                      100 * r->sm_share, r->stats.median * 1000, 100 * r->stats.relative_spread(),
                      r->gbps, 100 * r->copy_share, r->ratio, r->check.c_str(),
                      r->cached ? " (cached)" : "");
        os << buf;
    }
    (void)spec;
    return os.str();
}

std::string sweep_json(const SweepSpec& spec, const SweepResult& result) {
    std::ostringstream json;
    json << "{\n  \"kernel\": " << json_string(spec.kernel)
         << ",\n  \"provenance\": " << json_string(result.provenance.text())
         << ",\n  \"search\": " << json_string(result.search)
         << ",\n  \"rejected\": " << result.rejected << ",\n  \"wall_ms\": " << result.wall_ms
         << ",\n  \"copy_gbps\": " << result.copy_gbps << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < result.rows.size(); ++i) {
        const SweepRow& r = result.rows[i];
        json << "    {\"variant\": " << json_string(r.variant.label()) << ", \"params\": {";
        bool first = true;
        for (const auto& [k, v] : r.variant.params) {
            json << (first ? "" : ", ") << json_string(k) << ": " << v;
            first = false;
        }
        json << "}, \"device\": " << r.device
             << ", \"baseline\": " << (r.variant.baseline ? "true" : "false")
             << ", \"grid\": " << json_string(r.variant.grid.str())
             << ", \"block\": " << json_string(r.variant.block.str())
             << ", \"blocks_per_sm\": " << r.blocks_per_sm << ", \"waves\": " << r.waves
             << ", \"sm_share\": " << r.sm_share << ", \"median_ms\": " << r.stats.median
             << ", \"samples_ms\": [";
        for (std::size_t s = 0; s < r.stats.samples.size(); ++s)
            json << (s ? ", " : "") << r.stats.samples[s];
        json << "], \"gbps\": " << r.gbps << ", \"ratio\": " << r.ratio
             << ", \"check\": " << json_string(r.check) << ", \"error\": " << json_string(r.error)
             << "}" << (i + 1 < result.rows.size() ? "," : "") << '\n';
    }
    json << "  ]\n}\n";
    return json.str();
}

void write_sweep_outputs(const SweepSpec& spec, const SweepResult& result, const fs::path& dir) {
    fs::create_directories(dir);
    std::ofstream csv(dir / "sweep.csv");
    csv << "variant";
    for (const auto& p : spec.params)
        csv << ',' << p.name;
    csv << ",device,grid,block,smem,registers,blocks_per_sm,waves,sm_share,median_ms,min_ms,max_ms,"
           "stddev_ms,gbps,copy_share,ratio,check,error\n";
    std::ofstream(dir / "sweep.json") << sweep_json(spec, result);
    for (const SweepRow& r : result.rows) {
        csv << '"' << r.variant.label() << '"';
        for (const auto& p : spec.params)
            csv << ',' << r.variant.params.at(p.name);
        csv << ',' << r.device << ',' << '"' << r.variant.grid.str() << "\",\""
            << r.variant.block.str() << "\"," << r.variant.smem << ',' << r.registers << ','
            << r.blocks_per_sm << ',' << r.waves << ',' << r.sm_share << ',' << r.stats.median
            << ',' << r.stats.min << ',' << r.stats.max << ',' << r.stats.stddev << ',' << r.gbps
            << ',' << r.copy_share << ',' << r.ratio << ',' << '"' << r.check << "\","
            << json_string(r.error) << '\n';
    }

    // SVG: one bar per variant (median time), in file order, the baseline in another colour.
    double top = 0;
    for (const auto& r : result.rows)
        top = std::max(top, r.stats.median * 1000);
    const int bar = 28, gap = 8, left = 70, height = 320, bottom = 170;
    const int width = left + static_cast<int>(result.rows.size()) * (bar + gap) + 40;
    std::ofstream svg(dir / "sweep.svg");
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
        << height + bottom << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
        << "<text x=\"10\" y=\"18\" font-size=\"14\">kjit sweep " << spec.kernel
        << ": median time per launch (us)</text>\n"
        << "<text x=\"10\" y=\"34\">" << result.provenance.text() << "</text>\n";
    for (int t = 0; t <= 4 && top > 0; ++t) {
        const double v = top * t / 4;
        const int y = height - static_cast<int>((height - 50) * t / 4.0);
        svg << "<line x1=\"" << left << "\" x2=\"" << width - 20 << "\" y1=\"" << y << "\" y2=\""
            << y << "\" stroke=\"#ddd\"/><text x=\"5\" y=\"" << y + 4 << "\">"
            << std::round(v * 100) / 100 << "</text>\n";
    }
    for (std::size_t i = 0; i < result.rows.size(); ++i) {
        const SweepRow& r = result.rows[i];
        const int x = left + static_cast<int>(i) * (bar + gap);
        const double v = r.stats.median * 1000;
        const int h = top > 0 ? static_cast<int>((height - 50) * v / top) : 0;
        const char* colour = !r.error.empty() ? "#c33" : r.variant.baseline ? "#e90" : "#38c";
        svg << "<rect x=\"" << x << "\" y=\"" << height - h << "\" width=\"" << bar
            << "\" height=\"" << h << "\" fill=\"" << colour << "\"><title>" << r.variant.label()
            << ": " << v << " us " << r.check << "</title></rect>\n"
            << "<text transform=\"translate(" << x + bar / 2 << "," << height + 8
            << ") rotate(60)\">" << r.variant.label() << "</text>\n";
    }
    svg << "</svg>\n";
}

std::filesystem::path sweep_out_dir(const std::filesystem::path& file, const std::string& out) {
    return out.empty() ? std::filesystem::path(file.stem().string() + ".out")
                       : std::filesystem::path(out);
}

} // namespace kjit
