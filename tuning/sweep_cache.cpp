#include "tuning/sweep_cache.hpp"

#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/hash.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kjit {

namespace fs = std::filesystem;

namespace {
fs::path results_dir() {
    return DiskCache::default_dir() / "sweeps";
}
} // namespace

std::string sweep_row_key(const SweepSpec& spec, const SweepVariant& v,
                          const std::string& compile_key, const std::string& gpu,
                          std::uint64_t seed) {
    std::string k = compile_key + "|" + v.label() + "|" + v.grid.str() + v.block.str() + "|" +
                    std::to_string(v.smem) + "|" + gpu + "|" + std::to_string(seed) + "|" +
                    std::to_string(nvrtc_version()) + "|" + spec.text + "|" +
                    contract_text(spec.contract) + "|" + std::string(dtype_name(spec.dtype)) +
                    "|shape";
    // The dtype and shape the sweep runs at: the file's, or those `kjit tune` set over them.
    for (const auto& [key, value] : spec.shape)
        k += " " + key + "=" + std::to_string(value);
    return hash128(k).hex();
}

void store_sweep_row(const SweepRow& r) {
    std::error_code ec;
    fs::create_directories(results_dir(), ec);
    std::ostringstream os;
    os.precision(17);
    os << "blocks_per_sm " << r.blocks_per_sm << "\nwaves " << r.waves << "\nsm_share "
       << r.sm_share << "\nregisters " << r.registers << "\ngbps " << r.gbps << "\ncopy_share "
       << r.copy_share << "\nunwritten " << r.unwritten << "\nerror_vs_reference "
       << r.error_vs_reference << "\nmax_abs_vs_reference " << r.max_abs_vs_reference
       << "\nsamples";
    for (double s : r.stats.samples)
        os << ' ' << s;
    os << "\ndigests";
    for (const auto& [n, d] : r.digests)
        os << ' ' << n << ':' << hex64(d);
    os << '\n';
    const fs::path file = results_dir() / (r.key + ".row");
    const fs::path tmp = file.string() + ".tmp." + std::to_string(::getpid());
    std::ofstream(tmp) << os.str();
    fs::rename(tmp, file, ec);
}

bool load_sweep_row(SweepRow& r) {
    std::ifstream in(results_dir() / (r.key + ".row"));
    if (!in)
        return false;
    std::string line;
    std::vector<double> samples;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string name;
        ls >> name;
        if (name == "blocks_per_sm")
            ls >> r.blocks_per_sm;
        else if (name == "waves")
            ls >> r.waves;
        else if (name == "sm_share")
            ls >> r.sm_share;
        else if (name == "registers")
            ls >> r.registers;
        else if (name == "gbps")
            ls >> r.gbps;
        else if (name == "copy_share")
            ls >> r.copy_share;
        else if (name == "unwritten")
            ls >> r.unwritten;
        else if (name == "error_vs_reference")
            ls >> r.error_vs_reference;
        else if (name == "max_abs_vs_reference")
            ls >> r.max_abs_vs_reference;
        else if (name == "samples")
            for (double v; ls >> v;)
                samples.push_back(v);
        else if (name == "digests")
            for (std::string d; ls >> d;) {
                const auto colon = d.rfind(':');
                const auto v = parse_hex64(d.substr(colon + 1));
                if (colon == std::string::npos || !v)
                    return false;
                r.digests.emplace_back(d.substr(0, colon), *v);
            }
    }
    if (samples.empty())
        return false;
    r.stats = Stats::of(samples);
    r.cached = true;
    return true;
}

} // namespace kjit
