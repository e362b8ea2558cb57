// libFuzzer target for the disk-cache entry decoder: any bytes decode or are refused with a
// reason, never crash; an encoded entry decodes back to itself (one with an empty CUBIN is
// refused), and one changed byte of it is refused. fuzz/run.sh builds and runs it.
#include "jit/cache_entry.hpp"
#include "jit/cache_files.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {
constexpr kjit::Hash128 kKey{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // A cache directory's file name is outside input too: kjit's own names parse back exactly.
    const kjit::CacheFileName name = kjit::parse_cache_file_name(bytes);
    if ((name.kind == kjit::CacheFileKind::entry && kjit::entry_file_name(name.key) != bytes) ||
        (name.kind == kjit::CacheFileKind::lock && kjit::lock_file_name(name.key) != bytes))
        __builtin_trap();
    std::string problem;
    if (const auto entry = kjit::decode_entry(bytes, kKey, &problem)) {
        (void)kjit::meta_value(entry->meta, "kernel");
    } else if (problem.empty()) {
        __builtin_trap(); // a refusal must say why
    }

    // The input as meta and payload (the first byte picks the split): the round trip holds.
    if (size == 0)
        return 0;
    const std::size_t split = data[0] % size;
    const kjit::CacheEntry built{kKey, std::string(bytes.substr(1, split)),
                                 std::string(bytes.substr(1 + split))};
    const std::string encoded = kjit::encode_entry(built);
    const auto back = kjit::decode_entry(encoded, kKey, &problem);
    if (built.payload.empty()) { // an empty CUBIN is never served
        if (back || problem != "empty CUBIN")
            __builtin_trap();
        return 0;
    }
    if (!back || back->key != built.key || back->meta != built.meta ||
        back->payload != built.payload)
        __builtin_trap();
    std::string damaged = encoded;
    damaged[(data[0] * 131u + size) % damaged.size()] ^= 0x20;
    if (kjit::decode_entry(damaged, kKey, &problem))
        __builtin_trap();
    return 0;
}
