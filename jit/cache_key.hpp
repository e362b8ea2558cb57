#pragma once

#include "jit/compile_options.hpp"
#include "jit/hash.hpp"
#include "jit/sources.hpp"

#include <array>
#include <filesystem>
#include <string>
#include <string_view>

namespace kjit {

/// Bumped whenever the key encoding or the disk entry layout changes (2: every value of the
/// entry's meta is escaped, as jit/compile_record.hpp writes it; 3: the headers a kernel can
/// include, the content of extra include directories, the toolkit's version; 4: each entry
/// point's parameter types and each name expression's lowered name in the meta, the name
/// expressions and the default toolkit directories in the key; 5: each entry point's launch
/// bound, `.maxntid`, in the meta; 6: a kernel without an entry point fails its compile unless
/// the request accepts one, CompileOptions::entry_optional, which the key covers; 7: an entry
/// point whose launch bound is above kMaxBlockThreads fails its compile; 8: a file of templates
/// without an entry point fails its compile unless CompileOptions::templates_later, which the
/// key covers, so an entry stored under the plain key before is not served; 9: a compile whose
/// file #defines an injected define again (NVRTC's "incompatible redefinition") fails).
inline constexpr int kCacheFormatVersion = 9;

/// What a compile's key is made of, one hash per component, so that `kjit cache why` can
/// say which component differs between two requests. `source`: the kernel's name and text;
/// `headers`: the name and text of each file it can include (SourceSet::includable);
/// `includes`: the content of every file under each extra include directory; `toolkit`: the
/// version of the CUDA toolkit whose include directories are given.
struct KeyComponents {
    enum Index {
        source,
        headers,
        defines,
        options,
        arch,
        includes,
        toolkit,
        nvrtc,
        format,
        kCount
    };
    static constexpr std::array<const char*, kCount> kNames = {"source",  "headers", "defines",
                                                               "options", "arch",    "includes",
                                                               "toolkit", "nvrtc",   "format"};
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

/// The key of compiling `kernel` from `sources` with `options` under this process's NVRTC;
/// ConfigError for options check_options() refuses or a kernel source that is empty.
CacheKey make_cache_key(const SourceSet& sources, std::string_view kernel,
                        const CompileOptions& options);

/// The same with the NVRTC and format versions given (what the key would be under another
/// NVRTC or kjit), for tests and `kjit cache why` (CompileOptions::check() only).
CacheKey make_cache_key(const SourceSet& sources, std::string_view kernel,
                        const CompileOptions& options, int nvrtc, int format);

/// The content of an include directory as the key sees it: the name (relative to dir) and
/// xxh3-128 of every regular file under it, links followed, each directory once; "" when dir
/// is not a directory. File hashes are remembered by stamp (FileStamp) within the process.
std::string include_dir_content(const std::filesystem::path& dir);

/// What keys a toolkit include directory: the first of ../version.json, ../../version.json,
/// ../version.txt, cuda.h, ../cuda.h that exists, by name and content hash; the directory's
/// content (include_dir_content) when none does.
std::string toolkit_version(const std::filesystem::path& dir);

} // namespace kjit
