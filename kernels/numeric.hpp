#pragma once
// The input generator and the bf16 rounding every kernel input goes through.

#include <cstdint>
#include <span>

namespace kjit {

/// Counter-based generator: the value at (seed, index) is a pure function of both, so every
/// run and every GPU sees the same bits. splitmix64 of seed * 2^32 ^ index, top 24 bits mapped
/// to [-1, 1). Documented values: uniform(1, 0) == 0.53260350227355957f (tests pin more).
float uniform(std::uint64_t seed, std::uint64_t index);

/// Fills `out` with uniform(seed, i) for i = 0, 1, ...
void fill_uniform(std::span<float> out, std::uint64_t seed);

/// bfloat16 as its bits, rounded to nearest even (the kernels' common.cuh uses the same rule).
std::uint16_t to_bf16(float v);
/// The float a bfloat16's bits stand for (exact).
float from_bf16(std::uint16_t bits);

} // namespace kjit
