#pragma once

#include "jit/embed_manifest.hpp"
#include "jit/sources.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kjit {

/// How a file is out of date.
enum class Staleness {
    new_file, ///< on disk, not embedded: the binary predates it
    stale,    ///< embedded with other contents than the file on disk has now
    missing,  ///< embedded, no longer on disk
};

/// One out-of-date file.
struct FreshnessEntry {
    Staleness kind = Staleness::stale;
    std::string path;                   ///< the file on disk; missing: the embedded copy's path
    Hash128 embedded_hash;              ///< stale, missing
    Hash128 disk_hash;                  ///< new_file, stale
    std::int64_t embedded_mtime_ns = 0; ///< stale, missing: when the embedded copy was taken
    std::int64_t disk_mtime_ns = 0;     ///< new_file, stale: the file on disk
};

/// The sources a binary embeds against the files on disk.
struct FreshnessReport {
    std::size_t embedded_files = 0;
    /// In order: new and stale files (in the disk set's order), then missing files (in the
    /// manifest's order).
    std::vector<FreshnessEntry> entries;
    [[nodiscard]] bool fresh() const { return entries.empty(); }
};

/// The manifest of the sources `set` holds (this binary's: SourceSet::embedded()); `prefix`
/// empty: the directory the first file's path shows.
EmbedManifest manifest_of(const SourceSet& set, const std::string& prefix = {});

/// Compares the files a binary embeds (its manifest) with `disk`, by content hash.
FreshnessReport check_freshness(const EmbedManifest& embedded, const SourceSet& disk);

/// The manifest of `binary` that records the tree `disk` is: the one that shares the most file
/// names with it. ConfigError at the binary when it embeds no kernel tree (it was not built
/// with kjit_embed_kernels()) or none of its trees shares a name with `disk`.
EmbedManifest manifest_for(const std::filesystem::path& binary, const SourceSet& disk);

} // namespace kjit
