#include "kernels/numeric.hpp"

#include <bit>

namespace kjit {

float uniform(std::uint64_t seed, std::uint64_t index) {
    std::uint64_t z = (seed << 32) ^ index;
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    // 24 bits are exact in a float: values k / 2^23 - 1 for k in [0, 2^24).
    return static_cast<float>(static_cast<double>(z >> 40) / 8388608.0 - 1.0);
}

void fill_uniform(std::span<float> out, std::uint64_t seed) {
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = uniform(seed, i);
}

std::uint16_t to_bf16(float v) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(v);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
}

float from_bf16(std::uint16_t bits) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

} // namespace kjit
