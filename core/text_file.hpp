#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace kjit {

/// The most bytes kjit reads from one input file (a TOML file, a kernel source, a ledger).
inline constexpr std::uint64_t kMaxInputFileBytes = 64ull << 20;

/// The bytes of the regular file at `path` (links followed), read without ever blocking: a
/// directory, a FIFO, a device (/dev/zero) or a socket is refused, and so is a file over
/// kMaxInputFileBytes. ConfigError at `path`: `cannot read WHAT: REASON` ("Is a directory",
/// "it is a character device, not a regular file", "it is N bytes, more than the 64 MiB kjit
/// reads from one file"). `max_bytes` raises the cap for a larger kind of input (a binary).
std::string read_text_file(const std::filesystem::path& path, std::string_view what,
                           std::uint64_t max_bytes = kMaxInputFileBytes);

/// Writes `bytes` to `path` whole or not at all: into a temporary file beside it, synced, then
/// renamed over it, so a reader never sees half a file and a failed write leaves the old one
/// (with its permissions; a symbolic link stays, the file it names is replaced). A path that
/// exists as something other than a regular file (/dev/null, a FIFO) is written directly; a
/// directory is refused. ConfigError at `path`: `cannot write WHAT: REASON` ("No such file or
/// directory", "Is a directory", "No space left on device").
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                           std::string_view what);

} // namespace kjit
