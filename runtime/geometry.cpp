#include "runtime/geometry.hpp"

#include "runtime/context.hpp"

#include <algorithm>
#include <cstdio>

namespace kjit {

std::string LaunchGeometry::str() const {
    char buf[96];
    std::snprintf(buf, sizeof buf, "blocks/SM=%d waves=%.2f SMs=%.1f%%", blocks_per_sm, waves,
                  100.0 * sm_share);
    return buf;
}

namespace {
int occupancy(const Function& f, const Dim3& block, unsigned smem) {
    int per_sm = 0;
    check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
              &per_sm, f.handle(), static_cast<int>(block.volume()), smem),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor", [&] {
              return "kernel=" + f.name() + " block=" + block.str() +
                     " smem=" + std::to_string(smem);
          });
    return per_sm;
}
} // namespace

LaunchGeometry launch_geometry(const Function& f, const LaunchConfig& c) {
    LaunchGeometry g;
    g.blocks_per_sm = occupancy(f, c.block, c.smem_bytes);
    g.sm_count = Device::get(f.device_ordinal()).sm_count();
    g.blocks = c.grid.volume();
    const double slots = static_cast<double>(g.blocks_per_sm) * g.sm_count;
    g.waves = slots > 0 ? static_cast<double>(g.blocks) / slots : 0;
    g.sm_share = g.sm_count > 0 ? std::min<double>(static_cast<double>(g.blocks), g.sm_count) /
                                      g.sm_count
                                : 0;
    return g;
}

unsigned grid_for_occupancy(const Function& f, const Dim3& block, unsigned smem_bytes,
                            int per_sm) {
    const int fit = occupancy(f, block, smem_bytes);
    const int use = per_sm > 0 ? std::min(per_sm, fit) : fit;
    return static_cast<unsigned>(std::max(1, use) * Device::get(f.device_ordinal()).sm_count());
}

} // namespace kjit
