#include "jit/remote/remote_entry.hpp"

#include "jit/detail/bytes.hpp"

#include <cstring>

namespace kjit {

namespace {

constexpr char kMagic[8] = {'K', 'J', 'I', 'T', 'S', 'I', 'G', 'N'};
constexpr std::uint32_t kSigned = 1;
/// Where the tag is, and how many header bytes it covers (those before it).
constexpr std::size_t kTagOffset = 32;
constexpr std::string_view kDomain = "kjit remote entry";

using detail::get;
using detail::put;

/// What the tag covers: the domain, the header before the tag, the entry bytes.
std::string signed_text(std::string_view head, std::string_view entry) {
    std::string m;
    m.reserve(kDomain.size() + head.size() + entry.size());
    m += kDomain;
    m += head;
    m += entry;
    return m;
}

} // namespace

std::string encode_remote_entry(const CacheEntry& entry, const SigningKey* key) {
    const std::string inner = encode_entry(entry);
    std::string out;
    out.reserve(kRemoteHeaderBytes + inner.size());
    out.append(kMagic, sizeof kMagic);
    put<std::uint32_t>(out, kRemoteEnvelopeVersion);
    put<std::uint32_t>(out, key ? kSigned : 0);
    put<std::uint64_t>(out, entry.key.lo);
    put<std::uint64_t>(out, entry.key.hi);
    Mac tag{};
    if (key)
        tag = key->sign(signed_text(out, inner));
    out.append(reinterpret_cast<const char*>(tag.data()), tag.size());
    out += inner;
    return out;
}

std::optional<CacheEntry> decode_remote_entry(std::string_view bytes, const Hash128& expected_key,
                                              const SigningKey* key, std::string* problem) {
    const auto fail = [&](std::string why) -> std::optional<CacheEntry> {
        if (problem)
            *problem = std::move(why);
        return std::nullopt;
    };
    if (bytes.size() < kRemoteHeaderBytes)
        return fail("truncated: " + std::to_string(bytes.size()) +
                    " bytes, shorter than the envelope's header");
    if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return fail("not a kjit remote entry (bad magic)");
    const auto version = get<std::uint32_t>(bytes, 8);
    if (version != kRemoteEnvelopeVersion)
        return fail("envelope version " + std::to_string(version) + ", this kjit reads " +
                    std::to_string(kRemoteEnvelopeVersion));
    const auto flags = get<std::uint32_t>(bytes, 12);
    if (flags & ~kSigned)
        return fail("unknown envelope flags " + std::to_string(flags));
    const std::string_view inner = bytes.substr(kRemoteHeaderBytes);
    if (key) {
        if (!(flags & kSigned))
            return fail("unsigned, and a secret is set (KJIT_REMOTE_SECRET): only entries "
                        "signed with it are served");
        Mac tag;
        std::memcpy(tag.data(), bytes.data() + kTagOffset, tag.size());
        if (!key->verify(signed_text(bytes.substr(0, kTagOffset), inner), tag))
            return fail("signature does not verify (signed with another secret, or altered)");
    }
    const Hash128 held{get<std::uint64_t>(bytes, 16), get<std::uint64_t>(bytes, 24)};
    if (!(held == expected_key))
        return fail("holds key " + held.hex() + " under key " + expected_key.hex() +
                    " (an entry replayed under another key)");
    std::string inner_problem;
    std::optional<CacheEntry> entry = decode_entry(inner, expected_key, &inner_problem);
    if (!entry)
        return fail("entry " + inner_problem);
    return entry;
}

std::string peek_remote_meta(std::string_view bytes, std::size_t* need) {
    constexpr std::size_t kHeaders = kRemoteHeaderBytes + kCacheHeaderBytes;
    if (need)
        *need = 0;
    if (bytes.size() < kHeaders) {
        if (need && (bytes.size() < sizeof kMagic ||
                     std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0))
            *need = kHeaders;
        return {};
    }
    if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return {};
    const auto meta_len = get<std::uint32_t>(bytes, kRemoteHeaderBytes + 12);
    if (bytes.size() < kHeaders + meta_len) {
        if (need)
            *need = kHeaders + meta_len;
        return {};
    }
    return std::string(bytes.substr(kHeaders, meta_len));
}

} // namespace kjit
