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

/// A position in a file of a SourceSet: `file` is the set's name for it ("common.cuh"); in a
/// file outside the set (a header found through -I or the toolkit), `file` is empty and
/// `disk_path` is that file's path.
struct SourcePos {
    std::string file;
    int line = 0;
    int column = 0;
    std::string disk_path;
};

/// A `#define` the preprocessor ran (inactive branches are not seen).
struct MacroDef {
    std::string name;
    SourcePos pos;
    bool function_like = false;
    std::vector<std::string> params; ///< a function-like macro's, `...` as `__VA_ARGS__`
    bool variadic = false;
    std::vector<std::string> body; ///< the replacement list's tokens
};

/// A macro name the preprocessor expanded or tested (`#ifdef`, `defined`) while it was defined.
struct MacroUse {
    std::string name;
    SourcePos pos;
};

/// One parameter of a `__global__` function, sized for the device (nvptx64) as NVRTC lays it
/// out: an array or function parameter is the pointer it decays to.
struct KernelParam {
    std::string name;
    std::string type;
    SourcePos pos;
    long long size = -1;  ///< bytes; -1 when not known (see `error`, `dependent`)
    long long align = -1; ///< bytes; -1 when not known
    bool dependent = false; ///< the type depends on a template parameter
    /// Why the size is not known though the type does not depend on a template parameter
    /// ("unknown type 'CUtensorMap'"); empty otherwise.
    std::string error;
};

/// A `__global__` entry point, or one instantiation of a `__global__` template.
struct EntryPoint {
    std::string name;
    std::string qualified; ///< with its namespaces: "ns::scale"
    std::string mangled;   ///< the symbol in the PTX: the name itself for `extern "C"`
    SourcePos pos;         ///< of its definition when the unit has one, else its declaration
    bool is_template = false;
    bool is_definition = false;
    std::string instantiation; ///< the name expression this entry instantiates, if any
    /// An instantiation's integral template arguments by parameter name ("Width" -> 4), which
    /// `__launch_bounds__(Width * 32)` is evaluated with.
    std::map<std::string, long long> template_values;
    std::vector<KernelParam> params;
    /// The tokens written before the name (`extern "C" __global__ void LB(256)`), macros not
    /// expanded: `__launch_bounds__` may be spelled through a macro.
    std::vector<std::string> specifiers;
    std::string error; ///< an instantiation that names no kernel: clang's reason
};

/// How to parse a kernel.
struct ParseOptions {
    std::map<std::string, std::string> defines; ///< injected as -D NAME=VALUE
    /// Searched after the kernel sources (IncludeResolver::search_dirs: the toolkit's headers).
    std::vector<std::string> include_dirs;
    /// Name expressions of `__global__` template instantiations ("scale<float, 4>"): each one
    /// the unit resolves becomes an EntryPoint with its instantiated parameters.
    std::vector<std::string> instantiations;
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
    /// Parses `file` of `sources` as CUDA device code, as NVRTC sees it (sm_90, NVRTC's
    /// predefined macros and types, no host headers), with `options`; Error when libclang
    /// returns no translation unit. Thread-safe.
    [[nodiscard]] ParsedUnit parse(const SourceSet& sources, const SourceFile& file,
                                   const ParseOptions& options) const;

    struct Api;

  private:
    Libclang() = default;
    std::unique_ptr<Api> api_;
    std::string path_;
};

} // namespace kjit::lint
