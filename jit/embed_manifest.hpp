#pragma once
// The manifest kjit-embed writes with the sources of one kjit_embed_kernels() target: the tree's
// PREFIX and each file's name, content hash and mtime, as one string in the binary's read-only
// data. `kjit fresh --binary APP` finds it in APP's bytes without loading or running APP, so a
// user's binary is compared with the user's sources by content, not by build time.

#include "jit/hash.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kjit {

/// The files one kjit_embed_kernels() target embeds.
struct EmbedManifest {
    struct File {
        std::string name; ///< relative to the embedded tree ("rms_norm.cu", "sub/x.cuh")
        Hash128 hash;     ///< of the text embedded
        std::int64_t mtime_ns = 0; ///< the file's mtime when it was embedded
    };
    std::string prefix; ///< kjit_embed_kernels(PREFIX): how the files' paths are shown
    std::vector<File> files;
};

/// The manifest's text: a header line, the prefix, one line per file, an end line. Names are
/// written with their length; a reader takes a name only when it is relative, stays in its tree
/// (no `..`), holds no control character, is at most 4096 bytes and appears once.
std::string format_manifest(const EmbedManifest& manifest);

/// Every well-formed manifest in `bytes` (a binary's contents), in order of appearance; text
/// that only starts like one is skipped.
std::vector<EmbedManifest> find_manifests(std::string_view bytes);

/// find_manifests() over the file `binary`; ConfigError naming it when it cannot be read.
std::vector<EmbedManifest> read_manifests(const std::filesystem::path& binary);

} // namespace kjit
