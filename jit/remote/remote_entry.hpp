#pragma once
// The envelope a cache entry travels in through a remote store, which more parties can write
// than a local directory: an entry is signed over its key and every byte, and one that does
// not verify is refused with the reason.

#include "jit/cache_entry.hpp"
#include "jit/remote/signing.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace kjit {

/// The envelope's format version.
inline constexpr std::uint32_t kRemoteEnvelopeVersion = 1;
/// The envelope's header size.
inline constexpr std::size_t kRemoteHeaderBytes = 64;

/// The bytes stored for `entry`: a 64-byte header, then the disk entry's bytes
/// (encode_entry(), with its own key and checksums). Header (little-endian): magic
/// "KJITSIGN", u32 envelope version, u32 flags (bit 0: signed), the 16-byte key, then
/// HMAC-SHA-256 under `key` of "kjit remote entry", the header's first 32 bytes and the entry
/// bytes (32 zero bytes when `key` is null: an unsigned entry).
std::string encode_remote_entry(const CacheEntry& entry, const SigningKey* key);

/// Verifies and opens an envelope stored under `expected_key`. With `key`, only an entry
/// signed with it passes; without (unsigned mode), the signature is not checked. Then the
/// envelope's key must be `expected_key` (not an entry replayed under another key) and the
/// entry inside must decode (its key, lengths, checksums). nullopt with `problem` naming why
/// the entry must not be served.
std::optional<CacheEntry> decode_remote_entry(std::string_view bytes, const Hash128& expected_key,
                                              const SigningKey* key, std::string* problem);

/// The meta text of an envelope's entry without verifying anything (for listings), from a
/// prefix of its bytes; when `bytes` is too short, `*need` is set to a longer prefix to read
/// (the headers while they are cut, then the headers and the whole meta text), else to 0.
/// "" when the bytes are not an envelope.
std::string peek_remote_meta(std::string_view bytes, std::size_t* need = nullptr);

} // namespace kjit
