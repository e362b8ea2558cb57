// libFuzzer target for jit's text-level readers of a source: the #include scanner that decides
// which files a kernel can read (and so what its cache key covers), and the logical lines and
// tokens the define checks read. Any text scans without crashing; every name found is one
// line; a directive appended on lines of its own is always found, whatever came before it;
// logical lines go forward within the text's lines and every token lies inside its line.
// fuzz/run.sh builds and runs it over kernel_src/ and the lint fixtures.
#include "jit/includes.hpp"
#include "jit/source_lines.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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
    const int physical = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    int last = 0;
    const kjit::LogicalSource source(text);
    for (const kjit::LogicalLine& l : source.lines()) {
        if (l.line <= last || l.line > physical)
            __builtin_trap();
        last = l.line;
        for (const kjit::Token& t : l.tokens)
            if (t.text.empty() || t.text.data() < l.text.data() ||
                t.text.data() + t.text.size() > l.text.data() + l.text.size())
                __builtin_trap();
        if (l.is_directive && !l.directive.empty())
            (void)kjit::header_name(l.text.substr(static_cast<std::size_t>(
                l.directive[0].text.data() + l.directive[0].text.size() - l.text.data())));
    }
    return 0;
}
