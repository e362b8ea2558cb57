#pragma once

#include "kernels/host_buffer.hpp"
#include "kernels/plan.hpp"

#include <cstdint>
#include <vector>

namespace kjit {

/// The generator values of input `spec` (see BufferSpec::scale) from `seed`; with scale 1 and
/// offset 0 exactly generated_buffer's.
HostBuffer generated_input(const BufferSpec& spec, std::uint64_t seed);
/// Input set `set` of `plan`: input k (of plan.inputs) filled from seed
/// `seed + set * inputs + k`; the same bits on every machine and every run.
std::vector<HostBuffer> generated_inputs(const CasePlan& plan, std::uint64_t seed, int set = 0);

} // namespace kjit
