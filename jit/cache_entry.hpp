#pragma once

#include "jit/hash.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kjit {

/// One disk-cache entry: a CUBIN and what produced it.
///
/// Layout (little-endian): 64-byte header, then `meta` (text, `key=value` lines), then the
/// payload. Header: magic "KJITCACH", u32 format version, u32 meta length, u64 payload length,
/// u64 xxh3-64 of the payload, 16-byte key, u64 reserved, u64 xxh3-64 of the header's first
/// 56 bytes and the meta. Every byte is covered by a length, the magic or a checksum.
struct CacheEntry {
    Hash128 key;
    std::string meta;
    std::string payload;
};

inline constexpr std::size_t kCacheHeaderBytes = 64;

/// The bytes of an entry file.
std::string encode_entry(const CacheEntry& entry);

/// Parses and verifies an entry file; nullopt with `problem` naming the damage (truncated,
/// wrong magic or version, key mismatch, checksum mismatch, an empty CUBIN) when it must not
/// be served.
std::optional<CacheEntry> decode_entry(std::string_view bytes, const Hash128& expected_key,
                                       std::string* problem);

/// The value of `name` in an entry's meta text, or "".
std::string meta_value(std::string_view meta, std::string_view name);

} // namespace kjit
