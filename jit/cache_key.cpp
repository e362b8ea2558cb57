#include "jit/cache_key.hpp"

#include "jit/compiler.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kjit {

namespace {

/// Appends a length-prefixed field, so that no two different field lists encode the same.
void put(std::string& out, std::string_view field) {
    const std::uint64_t n = field.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out.append(field);
}

/// Headers reached through -I are outside the SourceSet: key them by the directory and the
/// toolkit's version file beside it (NVRTC's bundled headers are covered by its version).
std::string toolkit_component(const CompileOptions& options) {
    std::string out;
    for (const auto& dir : options.include_dirs) {
        put(out, dir);
        for (const char* rel : {"/../version.json", "/../version.txt", "/cuda.h"}) {
            std::ifstream in(dir + rel, std::ios::binary);
            if (!in)
                continue;
            std::ostringstream s;
            s << in.rdbuf();
            put(out, rel);
            put(out, std::to_string(hash64(s.str())));
            break;
        }
    }
    return out;
}

} // namespace

CacheKey make_cache_key(const SourceSet& sources, std::string_view kernel,
                        const CompileOptions& options) {
    return make_cache_key(sources, kernel, options, nvrtc_version(), kCacheFormatVersion);
}

CacheKey make_cache_key(const SourceSet& sources, std::string_view kernel,
                        const CompileOptions& options, int nvrtc, int format) {
    const SourceFile& file = sources.kernel(kernel);
    std::array<std::string, KeyComponents::kCount> parts;
    put(parts[KeyComponents::source], file.text);
    for (const auto* h : sources.headers()) { // sorted by name
        put(parts[KeyComponents::headers], h->name);
        put(parts[KeyComponents::headers], h->text);
    }
    for (const auto& [name, value] : options.defines) { // std::map: sorted
        put(parts[KeyComponents::defines], name);
        put(parts[KeyComponents::defines], value);
    }
    // Every flag but the defines (above) and the arch (below), in sorted order.
    std::vector<std::string> flags;
    for (const auto& a : options.argv())
        if (a.rfind("-D", 0) != 0 && a.rfind("--gpu-architecture=", 0) != 0)
            flags.push_back(a);
    std::sort(flags.begin(), flags.end());
    for (const auto& f : flags)
        put(parts[KeyComponents::options], f);
    put(parts[KeyComponents::arch], options.arch);
    parts[KeyComponents::toolkit] = toolkit_component(options);
    put(parts[KeyComponents::nvrtc], std::to_string(nvrtc));
    put(parts[KeyComponents::format], std::to_string(format));

    CacheKey key;
    key.kernel = file.kernel_name();
    std::string all;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        key.components.hashes[i] = hash64(parts[i]);
        put(all, parts[i]);
    }
    key.hash = hash128(all);
    return key;
}

} // namespace kjit
