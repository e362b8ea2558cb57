// libFuzzer target for the remote tier's signed envelope and its Redis address parser: any
// bytes are opened or refused with a reason, never crash; an envelope refuses every change to
// a signed entry, a replay under another key, an unsigned entry where a secret is set, and
// anything signed with another secret, and an entry with an empty CUBIN. fuzz/run.sh builds and
// runs it.
#include "jit/remote/redis_client.hpp"
#include "jit/remote/remote_entry.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {
constexpr kjit::Hash128 kKey{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
constexpr kjit::Hash128 kOther{0x1111111111111111ULL, 0x2222222222222222ULL};
const kjit::SigningKey& secret() {
    static const kjit::SigningKey k = kjit::SigningKey::from_bytes("fuzzing secret, 32 bytes long..");
    return k;
}
const kjit::SigningKey& other() {
    static const kjit::SigningKey k = kjit::SigningKey::from_bytes("another secret, 32 bytes long..");
    return k;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        (void)kjit::RedisAddress::parse(bytes);
    } catch (const kjit::ConfigError&) {
    }
    std::string problem;
    for (const kjit::SigningKey* key : {&secret(), static_cast<const kjit::SigningKey*>(nullptr)}) {
        problem.clear();
        if (!kjit::decode_remote_entry(bytes, kKey, key, &problem) && problem.empty())
            __builtin_trap(); // a refusal must say why
    }
    std::size_t need = 0;
    (void)kjit::peek_remote_meta(bytes, &need);

    // The input as meta and payload (the first byte picks the split): the round trip holds,
    // and every refusal the envelope promises is made.
    if (size == 0)
        return 0;
    const std::size_t split = data[0] % size;
    const kjit::CacheEntry built{kKey, std::string(bytes.substr(1, split)),
                                 std::string(bytes.substr(1 + split))};
    const std::string envelope = kjit::encode_remote_entry(built, &secret());
    problem.clear();
    const auto back = kjit::decode_remote_entry(envelope, kKey, &secret(), &problem);
    // An empty CUBIN is never served (docs/bad-input.md), signed or not: refused with a reason.
    if (built.payload.empty()) {
        if (back || problem.empty())
            __builtin_trap();
        return 0;
    }
    if (!back || back->meta != built.meta || back->payload != built.payload)
        __builtin_trap();
    if (kjit::peek_remote_meta(envelope) != built.meta)
        __builtin_trap();
    std::string damaged = envelope;
    damaged[(data[0] * 131u + size) % damaged.size()] ^= 0x20;
    if (kjit::decode_remote_entry(damaged, kKey, &secret(), &problem) ||
        kjit::decode_remote_entry(envelope, kOther, &secret(), &problem) ||
        kjit::decode_remote_entry(envelope, kKey, &other(), &problem) ||
        kjit::decode_remote_entry(kjit::encode_remote_entry(built, nullptr), kKey, &secret(),
                                  &problem))
        __builtin_trap();
    return 0;
}
