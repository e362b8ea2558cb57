#pragma once
// Where an #include leads, looked up as NVRTC looks it up when kjit compiles: the compiler and
// the linter both resolve through this, so what lints clean compiles and what compiles lints
// clean.
//
// NVRTC 13, given headers in memory and --no-source-include (kjit's compile), looks in this
// order, for "..." and <...> alike and from any including file, in memory or on disk:
//   1. the in-memory header whose name is the include exactly as written ("b.cuh" finds the
//      header named "b.cuh", never "sub/b.cuh", even when the includer is "sub/a.cuh");
//   2. each -I directory in order: the extra include directories, then the toolkit's.
// It never looks beside the including file (not for a header on disk either).

#include "jit/sources.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Where one #include leads.
struct ResolvedInclude {
    enum class Where { source, include_dir, toolkit, missing };
    Where where = Where::missing;
    const SourceFile* file = nullptr; ///< Where::source: the file of the set
    std::filesystem::path path;       ///< include_dir, toolkit: the file on disk
    /// Where::missing: the file of the set that a lookup beside the including file would have
    /// found ("sub/b.cuh" for "b.cuh" in "sub/a.cuh"), which NVRTC does not do; else nullptr.
    const SourceFile* beside = nullptr;
    [[nodiscard]] bool found() const { return where != Where::missing; }
};

/// The CUDA toolkit's include directories a compile searches (default_toolkit_include_dirs(),
/// jit/toolkit.hpp), as paths.
const std::vector<std::filesystem::path>& toolkit_include_dirs();

/// NVRTC's include lookup for the programs of one SourceSet (see the file comment).
class IncludeResolver {
  public:
    /// `include_dirs` are the extra -I directories (CompileOptions::include_dirs), searched
    /// before the toolkit's.
    explicit IncludeResolver(const SourceSet& sources,
                             std::vector<std::filesystem::path> include_dirs = {},
                             std::vector<std::filesystem::path> toolkit_dirs = toolkit_include_dirs());

    /// Where `#include "name"` (`<name>` when `angled`) leads; `includer` is the including
    /// file's name in the set (or its path on disk), used only for ResolvedInclude::beside.
    [[nodiscard]] ResolvedInclude resolve(std::string_view name, bool angled,
                                          std::string_view includer = {}) const;
    /// The files of the set NVRTC is offered, under their names, when it compiles `kernel`:
    /// SourceSet::includable (a textual superset of what any define set reaches).
    [[nodiscard]] std::vector<const SourceFile*> headers(const SourceFile& kernel) const;
    /// The -I directories, in NVRTC's order: the extra ones, then the toolkit's.
    [[nodiscard]] std::vector<std::string> search_dirs() const;
    [[nodiscard]] const SourceSet& sources() const { return *sources_; }
    [[nodiscard]] const std::vector<std::filesystem::path>& toolkit_dirs() const {
        return toolkit_dirs_;
    }

  private:
    const SourceSet* sources_;
    std::vector<std::filesystem::path> include_dirs_;
    std::vector<std::filesystem::path> toolkit_dirs_;
};

} // namespace kjit
