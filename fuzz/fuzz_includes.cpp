// libFuzzer target for the #include scanner that decides which files a kernel can read (and so
// what its cache key covers): any text scans without crashing, every name found is one line,
// and a directive appended on lines of its own is always found, whatever came before it.
// fuzz/run.sh builds and runs it over kernel_src/ and the lint fixtures.
#include "jit/includes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const auto& name : kjit::scan_includes(text).names)
        if (name.find('\n') != std::string::npos)
            __builtin_trap();
    const kjit::IncludeScan marked =
        kjit::scan_includes(text + "\n\n#include \"kjit_fuzz_marker.h\"\n");
    if (std::find(marked.names.begin(), marked.names.end(), "kjit_fuzz_marker.h") ==
        marked.names.end())
        __builtin_trap();
    (void)kjit::has_header_extension(text);
    return 0;
}
