#pragma once

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
float from_bf16(std::uint16_t bits);

/// Relative L2 error ||got - want|| / ||want||; +inf when any `got` value is not finite.
double relative_l2(std::span<const double> got, std::span<const double> want);

/// float64 reference of rms_norm: y = x / sqrt(mean(x^2) + eps) * w, row by row.
void rms_norm_reference(std::span<const double> x, std::span<const double> w,
                        std::span<double> y, int rows, int n, double eps);

} // namespace kjit
