#pragma once

#include "jit/sources.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kjit {

/// How a file is out of date.
enum class Staleness {
    new_file,     ///< on disk, not embedded: the binary predates it
    stale,        ///< embedded with other contents than the file on disk has now
    missing,      ///< embedded, no longer on disk
    binary_older, ///< a binary built before a source on disk last changed
};

/// One out-of-date file.
struct FreshnessEntry {
    Staleness kind = Staleness::stale;
    std::string path;   ///< the source's path; for binary_older, the binary
    std::string source; ///< binary_older: the source on disk that is newer than the binary
    Hash128 embedded_hash;              ///< stale
    Hash128 disk_hash;                  ///< stale
    std::int64_t embedded_mtime_ns = 0; ///< stale, missing: when the embedded copy was taken
    std::int64_t disk_mtime_ns = 0;     ///< new_file, stale, binary_older: the file on disk
    std::int64_t binary_mtime_ns = 0;   ///< binary_older: when the binary was built
};

/// The sources a binary embeds against the files on disk, and binaries against the sources.
struct FreshnessReport {
    std::size_t embedded_files = 0;
    /// In order: new and stale files (in the disk set's order), missing files (in the
    /// embedded set's order), then, per binary, each source newer than it.
    std::vector<FreshnessEntry> entries;
    [[nodiscard]] bool fresh() const { return entries.empty(); }
};

/// Compares `embedded` with `disk` by content hash, and each binary's mtime with every file of
/// `disk`; ConfigError naming a binary that cannot be stat'ed.
FreshnessReport check_freshness(const SourceSet& embedded, const SourceSet& disk,
                                const std::vector<std::filesystem::path>& binaries = {});

/// check_freshness() of this binary's embedded sources against the files under `dir`.
FreshnessReport check_freshness(const std::filesystem::path& dir,
                                const std::vector<std::filesystem::path>& binaries = {});

} // namespace kjit
