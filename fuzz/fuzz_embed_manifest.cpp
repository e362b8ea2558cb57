// libFuzzer target for the manifest reader `kjit fresh --binary` runs over a binary's bytes:
// any bytes give the manifests they hold, never a crash; each one found, written back, reads
// back the same, alone and among other bytes. fuzz/run.sh builds and runs it.
#include "jit/embed_manifest.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    for (const kjit::EmbedManifest& m : kjit::find_manifests(bytes)) {
        const std::string text = kjit::format_manifest(m);
        for (const std::string& around : {text, std::string(bytes) + '\0' + text}) {
            const auto again = kjit::find_manifests(around);
            if (std::none_of(again.begin(), again.end(), [&](const kjit::EmbedManifest& a) {
                    return kjit::format_manifest(a) == text;
                }))
                __builtin_trap();
        }
    }
    return 0;
}
