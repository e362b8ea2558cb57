#pragma once

#include "runtime/launch.hpp"

#include <string>

namespace kjit {

/// How a launch sits on the device: the two numbers that tell a starved launch (a grid of a
/// few blocks on 132 SMs) from a busy one, which no throughput counter reports.
struct LaunchGeometry {
    int blocks_per_sm = 0;        ///< co-resident blocks per SM (occupancy limit)
    int sm_count = 0;
    unsigned long long blocks = 0;
    double waves = 0;             ///< blocks / (blocks_per_sm * sm_count)
    double sm_share = 0;          ///< share of SMs that get at least one block
    /// "blocks/SM=8 waves=0.12 SMs=9.1%".
    [[nodiscard]] std::string str() const;
};

/// The geometry of launching `function` with `config` on its device.
LaunchGeometry launch_geometry(const Function& function, const LaunchConfig& config);

/// A grid size from an occupancy target instead of a pinned constant: `per_sm` blocks on every
/// SM (0: as many as fit), capped by what fits.
unsigned grid_for_occupancy(const Function& function, const Dim3& block, unsigned smem_bytes,
                            int per_sm = 0);

} // namespace kjit
