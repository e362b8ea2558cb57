#pragma once

#include "jit/hash.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// One kernel source or device header, embedded at build time or read from disk.
struct SourceFile {
    std::string name; ///< relative to the kernel directory, as `#include` names it: "common.cuh"
    std::string path; ///< what diagnostics print: "kernel_src/rms_norm.cu"
    std::string text;
    Hash128 hash;           ///< xxh3-128 of text
    std::int64_t mtime_ns;  ///< the file's mtime when it was embedded (or read)
    /// A `.cu` file: a kernel family that can be compiled on its own.
    [[nodiscard]] bool is_kernel() const;
    /// "rms_norm" for "rms_norm.cu".
    [[nodiscard]] std::string kernel_name() const;
};

/// The kernels and headers one program can see: all `.cuh` files are offered as headers.
class SourceSet {
  public:
    /// Every file registered by the embedded-source objects linked into this binary.
    static SourceSet embedded();
    /// Every `.cu`/`.cuh` under dir; paths print as display_prefix/name (dir itself when empty).
    static SourceSet from_directory(const std::filesystem::path& dir,
                                    const std::string& display_prefix = {});

    /// The file with this name ("rms_norm.cu"), or nullptr.
    [[nodiscard]] const SourceFile* find(std::string_view name) const;
    /// The kernel "rms_norm" (or "rms_norm.cu"); NotFoundError naming the known kernels otherwise.
    [[nodiscard]] const SourceFile& kernel(std::string_view kernel) const;
    [[nodiscard]] std::vector<const SourceFile*> kernels() const;
    [[nodiscard]] std::vector<const SourceFile*> headers() const;
    [[nodiscard]] const std::vector<SourceFile>& files() const { return files_; }

    void add(SourceFile file);

  private:
    std::vector<SourceFile> files_;
};

/// Reads dir/name (name relative to dir) as a SourceFile shown as display_prefix/name
/// (dir/name when display_prefix is empty); ConfigError when it cannot be read.
SourceFile read_source_file(const std::filesystem::path& dir, const std::string& name,
                            const std::string& display_prefix = {});

namespace detail {
/// The generated registry's record of one embedded file (see cmake/KjitEmbed.cmake).
struct EmbeddedFile {
    const char* name;
    const char* path;
    const char* data;
    std::size_t size;
    std::uint64_t hash_lo;
    std::uint64_t hash_hi;
    std::int64_t mtime_ns;
};
/// A static instance in the generated file adds its files to SourceSet::embedded().
struct EmbeddedRegistrar {
    EmbeddedRegistrar(const EmbeddedFile* files, std::size_t count) noexcept;
};
} // namespace detail

} // namespace kjit
