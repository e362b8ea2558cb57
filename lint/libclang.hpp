#pragma once
// libclang's C API, opened with dlopen (DESIGN.md #2): one kjit binary runs where libclang-14
// is absent (the GPU machine has libclang-16, the same C API). The clang-c headers stay inside
// lint/ (lint/detail/libclang_api.hpp): nothing that includes this header needs them.

#include "jit/sources.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kjit::lint {

/// A position in a file of a SourceSet: `file` is the set's name for it ("common.cuh").
struct SourcePos {
    std::string file;
    int line = 0;
    int column = 0;
};

/// A `#define` the preprocessor ran (inactive branches are not seen).
struct MacroDef {
    std::string name;
    SourcePos pos;
    bool function_like = false;
    std::vector<std::string> body; ///< the replacement list's tokens
};

/// A macro name the preprocessor expanded or tested (`#ifdef`, `defined`) while it was defined.
struct MacroUse {
    std::string name;
    SourcePos pos;
};

/// One parameter of a `__global__` function, sized for the device (nvptx64).
struct KernelParam {
    std::string name;
    std::string type;
    long long size = -1;  ///< bytes; negative when clang cannot tell (a dependent type)
    long long align = -1; ///< bytes; negative when clang cannot tell
};

/// A `__global__` entry point.
struct EntryPoint {
    std::string name;
    SourcePos pos;
    bool is_template = false;
    std::vector<KernelParam> params;
    /// The tokens of each `__launch_bounds__` argument (max threads, min blocks, ...).
    std::vector<std::vector<std::string>> launch_bounds;
};

/// What one parse of a kernel, with one define set, shows.
struct ParsedUnit {
    std::vector<MacroDef> macros;
    std::vector<MacroUse> uses;
    std::vector<std::string> files; ///< set names of the main file and every file it included
    std::vector<EntryPoint> entries;
    std::vector<std::string> errors; ///< clang's errors (not lint findings: NVRTC has the say)
    bool fatal = false; ///< a fatal error (an include not found): the record is partial
};

/// The libclang C API taken from a dlopen'ed library; one per process is enough.
class Libclang {
  public:
    /// Opens `path`, or the first known libclang that loads when `path` is empty; nullptr
    /// with `why_not` set when none does or one lacks an entry point kjit uses.
    static std::unique_ptr<Libclang> open(const std::string& path, std::string* why_not);
    ~Libclang();
    Libclang(const Libclang&) = delete;
    Libclang& operator=(const Libclang&) = delete;

    /// The library file that was opened.
    [[nodiscard]] const std::string& path() const { return path_; }
    /// clang_getClangVersion(): "Debian clang version 14.0.6".
    [[nodiscard]] std::string version() const;
    /// Parses `file` of `sources` as CUDA device code (what NVRTC sees: sm_90, no host headers)
    /// with `defines` injected; Error when libclang returns no translation unit. Thread-safe.
    [[nodiscard]] ParsedUnit parse(const SourceSet& sources, const SourceFile& file,
                                   const std::map<std::string, std::string>& defines) const;

    struct Api;

  private:
    Libclang() = default;
    std::unique_ptr<Api> api_;
    std::string path_;
};

} // namespace kjit::lint
