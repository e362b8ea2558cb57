#pragma once

#include "tuning/sweep_result.hpp"
#include "tuning/sweep_spec.hpp"

#include <cstdint>
#include <string>

namespace kjit {

/// The results-cache key of a row: the variant's compile key, parameters, launch geometry,
/// GPU, seed, NVRTC version, the sweep file's text and its contract.
std::string sweep_row_key(const SweepSpec& spec, const SweepVariant& variant,
                          const std::string& compile_key, const std::string& gpu,
                          std::uint64_t seed);
/// Writes the measured fields of `row` under row.key (one small text file per row).
void store_sweep_row(const SweepRow& row);
/// Reads row.key's fields back into `row` (marked cached); false when there is no usable entry.
bool load_sweep_row(SweepRow& row);

} // namespace kjit
