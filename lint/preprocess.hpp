#pragma once
// The preprocessor's path through a kernel as NVRTC takes it: which branches are live under
// NVRTC's predefined macros, the source's own defines and one injected define set, and where
// each live #include leads (through jit's IncludeResolver, the compiler's lookup). The rules
// that read directives look only at what this walk reached.

#include "jit/include_resolver.hpp"
#include "lint/macros.hpp"
#include "lint/scanner.hpp"

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kjit::lint {

/// How a directive was reached, as bits merged over walks.
enum Reach : unsigned char {
    kReachLive = 1,  ///< in a branch the walk took
    kReachMaybe = 2, ///< under a condition it could not evaluate
    kReachDead = 4,  ///< in a branch it skipped
};

/// The macros NVRTC defines before the first line, for `arch` ("sm_90", "sm_90a",
/// "compute_80"): __CUDACC__, __CUDACC_RTC__, __CUDA_ARCH__ (900 for sm_90), the version
/// macros of `nvrtc_version` (major*1000 + minor*10), CUDART_VERSION, __cplusplus (C++17),
/// __LP64__ ... (never __NVCC__, __GNUC__ or a host platform's).
Macros nvrtc_macros(std::string_view arch, int nvrtc_version);

/// Scans of the files walks read, shared by the walks of one lint run (thread-safe): set files
/// by name, files on disk (the toolkit's headers) by path.
class ScanCache {
  public:
    explicit ScanCache(const SourceSet& sources) : sources_(&sources) {}
    /// The scan of the set file `name`; nullptr when the set has none.
    const ScannedSource* set_file(const std::string& name);
    /// The scan of the file at `path`; nullptr when it cannot be read.
    const ScannedSource* disk_file(const std::filesystem::path& path);

  private:
    const SourceSet* sources_;
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<ScannedSource>, std::less<>> set_;
    std::map<std::filesystem::path, std::unique_ptr<ScannedSource>> disk_;
};

/// One walk's inputs.
struct WalkOptions {
    const IncludeResolver* resolver = nullptr;
    ScanCache* scans = nullptr;
    Macros predefined;                           ///< nvrtc_macros(arch, ...)
    std::map<std::string, std::string> defines; ///< -D NAME=VALUE, after the predefined
};

/// A live #include of a set file.
struct IncludeEvent {
    std::string file;          ///< the including file's name in the set
    std::size_t directive = 0; ///< its index in scan(file)
    std::string name;          ///< as written, without quotes or brackets
    bool angled = false;
    ResolvedInclude resolved;
    /// Where it is found but cannot be compiled: "PATH:LINE includes <x.h>, which NVRTC cannot
    /// find" for a header on disk that includes a missing one; empty otherwise.
    std::string broken;
    /// When the missing include is inside the toolkit's headers: the toolkit header the chain
    /// entered them by (NVRTC provides some of their includes itself, so only a compile says
    /// whether it is really missing); empty otherwise.
    std::string broken_toolkit;
};

/// A live #if/#elif of a set file, as evaluated.
struct ConditionEvent {
    std::string file;
    std::size_t directive = 0;
    /// Indexes (into the directive's args) of the names it reads as values that no macro
    /// defined at that point: each evaluates to 0.
    std::vector<std::size_t> undefined;
    /// An include before it was missing or not followed: a name may have come from there.
    bool uncertain = false;
};

/// What one walk from a main file saw.
struct WalkResult {
    /// Per set file reached: the Reach bits of each directive of its scan.
    std::map<std::string, std::vector<unsigned char>> reach;
    std::vector<IncludeEvent> includes;
    std::vector<ConditionEvent> conditions;
};

/// Walks `main` (a file of the resolver's set) as NVRTC's preprocessor would.
WalkResult walk(const SourceFile& main, const WalkOptions& options);

/// The names the condition of `d` (#if/#elif) reads as values: identifiers not under
/// `defined`, not in a `__has_include(...)`-like operand, not `true`/`false`, not an
/// alternative token (`and`) and not an implementation name (`__CUDA_ARCH__`); as arg indexes.
std::vector<std::size_t> condition_reads(const Directive& d);

} // namespace kjit::lint
