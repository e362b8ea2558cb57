#include "kernels/host_buffer.hpp"

#include "kernels/numeric.hpp"

#include <bit>
#include <cstdio>
#include <cstring>

namespace kjit {

std::uint32_t canary_bits(DType dtype) {
    return dtype == DType::bf16 ? 0xffa5u : 0xffa5a5a5u;
}

namespace {

void set_element_bits(HostBuffer& b, std::size_t i, std::uint32_t bits) {
    if (b.dtype == DType::bf16) {
        const auto v = static_cast<std::uint16_t>(bits);
        std::memcpy(b.bytes.data() + 2 * i, &v, 2);
    } else {
        std::memcpy(b.bytes.data() + 4 * i, &bits, 4);
    }
}

HostBuffer sized_buffer(std::string name, DType dtype, std::size_t count) {
    HostBuffer b;
    b.name = std::move(name);
    b.dtype = dtype;
    b.count = count;
    b.bytes.resize(count * dtype_size(dtype));
    return b;
}

} // namespace

std::uint32_t element_bits(const HostBuffer& b, std::size_t i) {
    if (b.dtype == DType::bf16) {
        std::uint16_t v;
        std::memcpy(&v, b.bytes.data() + 2 * i, 2);
        return v;
    }
    std::uint32_t v;
    std::memcpy(&v, b.bytes.data() + 4 * i, 4);
    return v;
}

void store_element(HostBuffer& b, std::size_t i, float v) {
    set_element_bits(b, i, b.dtype == DType::bf16 ? to_bf16(v) : std::bit_cast<std::uint32_t>(v));
}

HostBuffer canary_buffer(std::string name, DType dtype, std::size_t count) {
    HostBuffer b = sized_buffer(std::move(name), dtype, count);
    const std::uint32_t bits = canary_bits(dtype);
    for (std::size_t i = 0; i < count; ++i)
        set_element_bits(b, i, bits);
    return b;
}

HostBuffer generated_buffer(std::string name, DType dtype, std::size_t count, std::uint64_t seed) {
    HostBuffer b = sized_buffer(std::move(name), dtype, count);
    for (std::size_t i = 0; i < count; ++i)
        store_element(b, i, uniform(seed, i));
    return b;
}

std::vector<double> element_values(const HostBuffer& b) {
    std::vector<double> out(b.count);
    for (std::size_t i = 0; i < b.count; ++i) {
        const std::uint32_t bits = element_bits(b, i);
        out[i] = b.dtype == DType::bf16 ? from_bf16(static_cast<std::uint16_t>(bits))
                                        : std::bit_cast<float>(bits);
    }
    return out;
}

std::string format_element(const HostBuffer& b, std::size_t index) {
    const std::uint32_t bits = element_bits(b, index);
    const float v = b.dtype == DType::bf16 ? from_bf16(static_cast<std::uint16_t>(bits))
                                           : std::bit_cast<float>(bits);
    char buf[64];
    std::snprintf(buf, sizeof buf, b.dtype == DType::bf16 ? "%.9g (0x%04x)" : "%.9g (0x%08x)",
                  static_cast<double>(v), bits);
    return buf;
}

Unwritten find_unwritten(const HostBuffer& b) {
    Unwritten u;
    const std::uint32_t canary = canary_bits(b.dtype);
    for (std::size_t i = 0; i < b.count; ++i)
        if (element_bits(b, i) == canary && u.count++ == 0)
            u.first = i;
    return u;
}

} // namespace kjit
