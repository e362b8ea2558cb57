#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kjit {

/// A 128-bit content hash (xxh3-128).
struct Hash128 {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    friend bool operator==(const Hash128&, const Hash128&) = default;
    /// 32 lowercase hex digits, high half first.
    [[nodiscard]] std::string hex() const;
    /// The hash hex() spells, or nothing unless `text` is exactly 32 hex digits.
    static std::optional<Hash128> parse(std::string_view text);
};

/// 16 lowercase hex digits.
std::string hex64(std::uint64_t v);

/// The value of exactly 16 hex digits (either case), or nothing.
std::optional<std::uint64_t> parse_hex64(std::string_view text);

/// xxh3-128 of a byte string.
Hash128 hash128(std::string_view bytes);

/// xxh3-64 of a byte string.
std::uint64_t hash64(std::string_view bytes);

} // namespace kjit
