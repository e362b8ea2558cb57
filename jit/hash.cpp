#include "jit/hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>

namespace kjit {

std::string hex64(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::optional<std::uint64_t> parse_hex64(std::string_view text) {
    if (text.size() != 16)
        return std::nullopt;
    std::uint64_t v = 0;
    for (char c : text) {
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return std::nullopt;
        v = v << 4 | static_cast<std::uint64_t>(d);
    }
    return v;
}

std::string Hash128::hex() const { return hex64(hi) + hex64(lo); }

std::optional<Hash128> Hash128::parse(std::string_view text) {
    if (text.size() != 32)
        return std::nullopt;
    const auto hi = parse_hex64(text.substr(0, 16)), lo = parse_hex64(text.substr(16));
    if (!hi || !lo)
        return std::nullopt;
    return Hash128{*lo, *hi};
}

Hash128 hash128(std::string_view bytes) {
    const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
    return {h.low64, h.high64};
}

std::uint64_t hash64(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

} // namespace kjit
