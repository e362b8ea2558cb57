#pragma once

#include "kernels/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kjit {

/// The canary an output is filled with before a launch: a signalling NaN (f32 0xffa5a5a5,
/// bf16 0xffa5), which no arithmetic or rounding produces, so any element still holding it
/// was never written.
std::uint32_t canary_bits(DType dtype);

/// A buffer's contents on the host, with what it is.
struct HostBuffer {
    std::string name;
    DType dtype = DType::f32;
    std::size_t count = 0; ///< elements
    std::vector<std::byte> bytes;
};

/// `count` elements of `dtype` all holding the canary.
HostBuffer canary_buffer(std::string name, DType dtype, std::size_t count);

/// `count` elements of generator values uniform(seed, i) (kernels/numeric.hpp), rounded to
/// `dtype`: the same bits on every machine and every run.
HostBuffer generated_buffer(std::string name, DType dtype, std::size_t count, std::uint64_t seed);

/// The bits of element `index` (the low 16 for bf16).
std::uint32_t element_bits(const HostBuffer& buffer, std::size_t index);
/// Writes `value`, rounded to the buffer's dtype, into element `index`.
void store_element(HostBuffer& buffer, std::size_t index, float value);
/// Every element of `buffer` as a double (exact: f32 and bf16 values are doubles).
std::vector<double> element_values(const HostBuffer& buffer);

/// Element `index` as "value (0xbits)": "0.123456791 (0x3dfcd6ea)".
std::string format_element(const HostBuffer& buffer, std::size_t index);

/// Elements still holding the canary after a launch.
struct Unwritten {
    std::size_t count = 0;
    std::size_t first = 0; ///< index of the first one (when count > 0)
};

/// The elements of `buffer` that hold the canary.
Unwritten find_unwritten(const HostBuffer& buffer);

} // namespace kjit
