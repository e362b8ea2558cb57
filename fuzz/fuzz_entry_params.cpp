// libFuzzer target for the parameter types a cache entry's meta carries (read back from disk or
// from the remote tier): any text decodes or is refused, never crashes; a decoded entry point
// encodes to text that decodes back to itself; a whole record's entry and lowered-name lines
// survive kernel_meta -> kernel_from_meta unchanged. fuzz/run.sh builds and runs it.
#include "jit/compile_record.hpp"
#include "jit/compiler.hpp"
#include "jit/kernel_params.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    // One "entry" line on its own.
    if (const auto params = kjit::decode_entry_params(text)) {
        for (const kjit::ParamType& p : params->params)
            (void)p.describe();
        const std::string encoded = kjit::encode_entry_params(*params);
        const auto back = kjit::decode_entry_params(encoded);
        if (!back || *back != *params || kjit::encode_entry_params(*back) != encoded)
            __builtin_trap();
    }

    // The same bytes as a whole record's meta: what it yields is what it writes again.
    const kjit::CompileOptions options;
    const kjit::CompiledKernel read = kjit::kernel_from_meta(text, "", "", options);
    const kjit::CompiledKernel again =
        kjit::kernel_from_meta(kjit::kernel_meta(read), "", "", options);
    if (again.entries != read.entries || again.lowered_names != read.lowered_names)
        __builtin_trap();
    return 0;
}
