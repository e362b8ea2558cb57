#pragma once

#include "core/flags.hpp"
#include "jit/compile_cache.hpp"
#include "jit/shape_file.hpp"
#include "jit/source_choice.hpp"
#include "jit/source_provider.hpp"
#include "runtime/context.hpp"
#include "runtime/module.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace kjit {

/// Where a prepared kernel came from.
enum class Prepared { memory, disk, remote, compiled, failed };

/// How a report names it: "memory", "hit" (disk), "remote", "miss" (compiled), "FAILED".
const char* prepared_name(Prepared origin);

/// One line of Engine::prepare's report.
struct PrepareRow {
    std::string name;
    std::string source;
    std::string defines; ///< as the verbs print them: "RMS_BLOCK=256 RMS_N=4096", "(none)"
    /// The same defines by name (the shape file's, the tuned table's and the flags'): what the
    /// kernel was compiled with, for a program to plan its launches from (kjit.plan).
    std::map<std::string, std::string> define_values;
    std::string key;
    Prepared origin = Prepared::failed;
    double compile_ms = 0; ///< NVRTC time (of the original compile, for disk hits)
    double read_ms = 0;    ///< disk cache read + verify
    double load_ms = 0;    ///< cuModuleLoadData + entry points
    /// Where each define of the compile comes from: "kernels/model.toml:13" (the shape file),
    /// "tuned: bench/tuned.toml:42" (the tuned table), "flag KJIT_..." (a flag's define).
    std::map<std::string, std::string> define_origins;
    /// What the tuned-table lookup did: "" (the spec reads none), "tuned.toml:42 (exact)", or
    /// "no entry for rms_norm rows=..,n=.. on GPU sm_90: the kernel's defaults".
    std::string tuned;
    /// What was compiled or read from a cache, without its CUBIN (entry points with their
    /// parameter types and launch bounds, lowered names): a dry run checks launches against it
    /// without a GPU. Null for a memory hit or a failure.
    std::shared_ptr<const CompiledKernel> compiled;
    std::exception_ptr error;
};

/// Lets string-keyed maps be searched with a string_view, without building a string.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

/// Settings of an Engine.
struct EngineOptions {
    CacheSettings cache;
    std::string arch; ///< empty: the context's device (sm_90 without a context)
    /// The declared flags the environment is checked against at start (builtin_flags() when
    /// empty); an application adds its own prefix and flags to builtin_flags() and passes it.
    std::optional<FlagRegistry> flags;
    /// Compile to check, not to run (CompileOptions::check_only): what a dry run's engine does;
    /// with no context only.
    bool check_only = false;
};

/// Specializes kernels for a model shape at start-up and hands out their entry points:
/// memory hits (this process loaded the key into this context) cost a lookup, disk hits
/// a read and a module load, misses are compiled in parallel.
class Engine {
  public:
    /// `context` may be null: prepare() then compiles (and caches) but loads nothing. Resolves
    /// the environment against the declared flags first: FlagError on an undeclared name,
    /// a bad value or a missing base flag; ConfigError for an arch NVRTC cannot compile CUBIN
    /// for (check_options). KJIT_NO_CACHE and KJIT_COMPILE_JOBS apply to the cache; every
    /// flag's define is injected into every compile (and so into its key). check_only with a
    /// context is an Error: what it compiles cannot be loaded.
    /// Without `sources`, the sources are chosen as every verb chooses them: KJIT_KERNEL_DIR,
    /// then the project file (kjit.toml) found from the working directory, then the embedded
    /// copies; a project file that does not parse is a ConfigError.
    explicit Engine(const Context* context, EngineOptions options = {},
                    SourceProvider sources = default_sources().provider());

    /// Prepares every spec for `shape`; one row per spec, in order. Failures are reported in
    /// their rows (error set), the others still prepared. A define a spec injects that its
    /// kernel's source never names (a text check of the kernel and its includes) fails that
    /// row with a ConfigError at the define in its shape file; with KJIT_ALLOW_UNREAD_DEFINES
    /// it is a warning (kjit::warn) and the row is prepared.
    std::vector<PrepareRow> prepare(const ModelShape& shape, std::span<const KernelSpec> specs,
                                    const CompileProgress& progress = {});

    /// The entry point `entry` of prepared kernel `name`: an exported name ("rms_norm") or one
    /// of the spec's instantiations ("gemm_kernel<128, float>"); NotFoundError when either is
    /// unknown. The function carries its parameter types (Function::param_types). With a
    /// source override, re-prepares first when a source changed on disk.
    /// The reference stays valid for the engine's lifetime, also across re-prepares.
    const Function& function(std::string_view name, std::string_view entry);

    /// The entry point of `name`, or of its fallback tier (and its fallback's, ...) when
    /// `config` does not fit `name`'s limits (block over the launch bounds, shared memory over
    /// the device maximum). The last tier is returned when none fits: its launch says why.
    const Function& function_for(std::string_view name, std::string_view entry,
                                 const LaunchConfig& config);

    [[nodiscard]] CompileCache& cache() { return cache_; }
    [[nodiscard]] SourceProvider& sources() { return sources_; }
    [[nodiscard]] const std::string& arch() const { return arch_; }
    /// The resolved flags; tier() is what every reading prints (`tier=bi+tc`).
    [[nodiscard]] const ResolvedFlags& flags() const { return flags_; }

  private:
    struct Loaded;
    /// Injects the tuned table's entry for `spec` on this engine's device (all of it, or none
    /// when the spec sets one of its defines to another value) and notes each define's origin
    /// and place (the entry's line); what the lookup did (PrepareRow::tuned).
    std::string apply_tuned(const SourceSet& sources, const std::string& source,
                            const KernelSpec& spec, const ModelShape& shape,
                            std::map<std::string, std::string>& defines,
                            std::map<std::string, std::string>& origins,
                            std::map<std::string, SourceLocation>& places) const;
    ResolvedFlags flags_;
    const Context* context_;
    std::string arch_;
    bool check_only_;
    CompileCache cache_;
    SourceProvider sources_;
    std::shared_ptr<const SourceSet> snapshot_;
    ModelShape shape_;
    std::vector<KernelSpec> specs_;
    mutable std::shared_mutex mutex_;
    // Loaded modules are never unloaded before the engine: function() hands out references.
    std::unordered_map<std::string, std::shared_ptr<const Loaded>, StringHash, std::equal_to<>>
        by_name_;
    std::unordered_map<std::string, std::shared_ptr<const Loaded>> by_key_;
};

} // namespace kjit
