#include "jit/cache_entry.hpp"

#include "jit/cache_key.hpp"
#include "jit/detail/bytes.hpp"

#include <cstring>

namespace kjit {

namespace {
constexpr char kMagic[8] = {'K', 'J', 'I', 'T', 'C', 'A', 'C', 'H'};

using detail::get;
using detail::put;
} // namespace

std::string encode_entry(const CacheEntry& e) {
    std::string out;
    out.reserve(kCacheHeaderBytes + e.meta.size() + e.payload.size());
    out.append(kMagic, sizeof kMagic);
    put<std::uint32_t>(out, kCacheFormatVersion);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(e.meta.size()));
    put<std::uint64_t>(out, e.payload.size());
    put<std::uint64_t>(out, hash64(e.payload));
    put<std::uint64_t>(out, e.key.lo);
    put<std::uint64_t>(out, e.key.hi);
    put<std::uint64_t>(out, 0);
    put<std::uint64_t>(out, hash64(out + e.meta));
    out += e.meta;
    out += e.payload;
    return out;
}

std::optional<CacheEntry> decode_entry(std::string_view bytes, const Hash128& expected_key,
                                       std::string* problem) {
    const auto fail = [&](std::string why) -> std::optional<CacheEntry> {
        if (problem)
            *problem = std::move(why);
        return std::nullopt;
    };
    if (bytes.size() < kCacheHeaderBytes)
        return fail("truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the header");
    if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return fail("not a kjit cache entry (bad magic)");
    const auto version = get<std::uint32_t>(bytes, 8);
    if (version != static_cast<std::uint32_t>(kCacheFormatVersion))
        return fail("format version " + std::to_string(version) + ", this kjit reads " +
                    std::to_string(kCacheFormatVersion));
    const auto meta_len = get<std::uint32_t>(bytes, 12);
    const auto payload_len = get<std::uint64_t>(bytes, 16);
    const std::uint64_t want = kCacheHeaderBytes + std::uint64_t{meta_len} + payload_len;
    if (payload_len > bytes.size() || want != bytes.size())
        return fail("truncated or padded: " + std::to_string(bytes.size()) +
                    " bytes, the header promises " + std::to_string(want));
    const Hash128 key{get<std::uint64_t>(bytes, 32), get<std::uint64_t>(bytes, 40)};
    if (!(key == expected_key))
        return fail("holds key " + key.hex() + ", expected " + expected_key.hex());
    const std::string_view meta = bytes.substr(kCacheHeaderBytes, meta_len);
    std::string covered(bytes.substr(0, 56));
    covered += meta;
    if (hash64(covered) != get<std::uint64_t>(bytes, 56))
        return fail("header checksum mismatch");
    const std::string_view payload = bytes.substr(kCacheHeaderBytes + meta_len);
    if (hash64(payload) != get<std::uint64_t>(bytes, 24))
        return fail("payload checksum mismatch");
    if (payload.empty()) // a CUBIN is never empty: such an entry is never served
        return fail("empty CUBIN");
    return CacheEntry{key, std::string(meta), std::string(payload)};
}

std::string meta_value(std::string_view meta, std::string_view name) {
    std::size_t pos = 0;
    while (pos < meta.size()) {
        const std::size_t end = std::min(meta.find('\n', pos), meta.size());
        const std::string_view line = meta.substr(pos, end - pos);
        if (line.size() > name.size() && line.substr(0, name.size()) == name &&
            line[name.size()] == '=')
            return std::string(line.substr(name.size() + 1));
        pos = end + 1;
    }
    return {};
}

} // namespace kjit
