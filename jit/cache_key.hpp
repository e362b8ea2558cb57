#pragma once

#include "jit/compile_options.hpp"
#include "jit/hash.hpp"
#include "jit/sources.hpp"

#include <array>
#include <string>
#include <string_view>

namespace kjit {

/// Bumped whenever the key encoding or the disk entry layout changes (2: every value of the
/// entry's meta is escaped, as jit/compile_record.hpp writes it).
inline constexpr int kCacheFormatVersion = 2;

/// What a compile's key is made of, one hash per component, so that `kjit cache why` can
/// say which component differs between two requests.
struct KeyComponents {
    enum Index { source, headers, defines, options, arch, toolkit, nvrtc, format, kCount };
    static constexpr std::array<const char*, kCount> kNames = {
        "source", "headers", "defines", "options", "arch", "toolkit", "nvrtc", "format"};
    std::array<std::uint64_t, kCount> hashes{};
};

/// The content key of one compile: xxh3-128 over a canonical, length-prefixed encoding of
/// everything that changes the output bytes, and nothing else.
struct CacheKey {
    Hash128 hash;
    KeyComponents components;
    std::string kernel; ///< for display; part of the key only through the source text
    [[nodiscard]] std::string hex() const { return hash.hex(); }
};

/// The key of compiling `kernel` from `sources` with `options` under this process's NVRTC.
CacheKey make_cache_key(const SourceSet& sources, std::string_view kernel,
                        const CompileOptions& options);

/// The same with the NVRTC and format versions given (what the key would be under another
/// NVRTC or kjit), for tests and `kjit cache why`.
CacheKey make_cache_key(const SourceSet& sources, std::string_view kernel,
                        const CompileOptions& options, int nvrtc, int format);

} // namespace kjit
