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

} // namespace kjit
