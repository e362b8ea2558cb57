#pragma once

#include "jit/hash.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
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

/// The kernels of a tree and the files they can include. A tree's set holds every `.cu` (a
/// kernel), every file with a header extension (has_header_extension: a library for programs
/// outside the tree too) and every file, whatever its name, that an #include of a file in the
/// set names (jit/includes.hpp; a computed `#include MACRO` brings in every file of the tree).
/// One kernel's compile sees, and its cache key covers, exactly includable(kernel).
class SourceSet {
  public:
    /// Every file registered by the embedded-source objects linked into this binary.
    static SourceSet embedded();
    /// The set of the tree under dir (see the class comment); paths print as
    /// display_prefix/name (dir/name when display_prefix is empty).
    static SourceSet from_directory(const std::filesystem::path& dir,
                                    const std::string& display_prefix = {});
    /// The set of a tree whose regular files are `names` (relative, '/'-separated); `read`
    /// returns the file of one name. Only the files that belong to the set are read.
    static SourceSet from_tree(const std::vector<std::string>& names,
                               const std::function<SourceFile(const std::string&)>& read);

    /// The file with this name ("rms_norm.cu"), or nullptr.
    [[nodiscard]] const SourceFile* find(std::string_view name) const;
    /// The kernel "rms_norm" (or "rms_norm.cu"); NotFoundError naming the known kernels otherwise.
    [[nodiscard]] const SourceFile& kernel(std::string_view kernel) const;
    [[nodiscard]] std::vector<const SourceFile*> kernels() const;
    [[nodiscard]] std::vector<const SourceFile*> headers() const;
    /// The files `kernel` (a file of this set) can read through #include and __has_include,
    /// transitively, sorted by name; every other file of the set when one of them has a
    /// computed #include. NVRTC is offered exactly these, by name, and nothing from disk.
    [[nodiscard]] std::vector<const SourceFile*> includable(const SourceFile& kernel) const;
    [[nodiscard]] const std::vector<SourceFile>& files() const { return files_; }

    void add(SourceFile file);

  private:
    std::vector<SourceFile> files_;
};

/// What a stat says about a file, compared to tell whether it changed. The inode and ctime
/// change on every write or rename and cannot be set back (`touch -d` and utimensat set only
/// mtime and atime), so a same-size edit with its old mtime restored still shows.
struct FileStamp {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
    /// True while the file may still change within the clock tick of its ctime (written less
    /// than a second before `now_ns`): such a file is compared by content, not by stamp.
    [[nodiscard]] bool racy(std::int64_t now_ns) const;
};

/// The stamp of the regular file at path (links followed), or nullopt.
std::optional<FileStamp> file_stamp(const std::filesystem::path& path);

/// The wall clock in nanoseconds, as file times are kept.
std::int64_t now_ns();

/// The regular files under dir (links to files followed, links to directories not, dangling
/// links skipped), as '/'-separated names relative to dir, sorted. ConfigError at the path of
/// a directory that cannot be read or a link that loops: `cannot read kernel source tree:
/// Permission denied`.
std::vector<std::string> list_tree(const std::filesystem::path& dir);

/// ConfigError at dir unless it is a directory: `kernel source directory does not exist or is
/// not a directory`, whether it came from --src, KJIT_KERNEL_DIR or a project file.
void require_source_dir(const std::filesystem::path& dir);

/// Reads dir/name (name relative to dir) as a SourceFile shown as display_prefix/name
/// (dir/name when display_prefix is empty); ConfigError when it cannot be read or is not a
/// regular file (core/text_file.hpp).
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
/// A static instance in the generated file adds its files to SourceSet::embedded(). It is
/// handed the block's manifest (jit/embed_manifest.hpp) too, which keeps that in the binary.
struct EmbeddedRegistrar {
    EmbeddedRegistrar(const EmbeddedFile* files, std::size_t count,
                      const char* manifest) noexcept;
};
} // namespace detail

} // namespace kjit
