#pragma once

#include "core/diagnostic.hpp"
#include "core/error.hpp"

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// The type of a declared flag; it decides which values parse.
enum class FlagType { boolean, integer, enumeration, string };

/// Where a resolved flag's value came from.
enum class FlagSource { default_value, environment };

/// Environment variables by name (injectable for tests; see process_environment()).
using Environment = std::map<std::string, std::string>;

/// The process environment (`environ`) as a map.
Environment process_environment();

/// "bool", "int", "enum" or "string" (the spelling flag files use).
std::string_view flag_type_name(FlagType type);

/// One declared environment flag.
struct FlagSpec {
    std::string name; ///< the variable, e.g. KJIT_NO_CACHE; under a registered prefix
    FlagType type = FlagType::string;
    std::string default_value; ///< in the flag's own syntax; "" = false / 0 / first choice
    std::string doc;           ///< one line
    std::int64_t min = std::numeric_limits<std::int64_t>::min(); ///< integer: lowest accepted
    std::int64_t max = std::numeric_limits<std::int64_t>::max(); ///< integer: highest accepted
    std::vector<std::string> choices; ///< enumeration: the accepted values (case-insensitive)
    /// Flags that must be on whenever this one is on (on: a true bool, or another type set in
    /// the environment to a non-empty value).
    std::vector<std::string> requires_;
    std::string define; ///< macro injected into kernel compiles with the value ("" = none)
};

/// The type with its accepted values: "bool", "int 0..1024", "int >= 1", "enum exact|fast".
std::string flag_type_text(const FlagSpec& spec);

/// A tier rule: when `flag` resolves to `value`, `tag` joins the tier string.
struct TierRule {
    std::string flag;
    std::string value; ///< in the flag's syntax; "" means true for a boolean flag
    std::string tag;
};

/// The environment has one or more errors; `diagnostics` lists every one (warnings too). A flag
/// diagnostic names the variable concerned in `path` (no line or column) and its `message` is
/// the full sentence: `KJIT_LEDGER=maybe is not a boolean; accepted values: ...`.
class FlagError : public ConfigError {
  public:
    explicit FlagError(std::vector<Diagnostic> diagnostics);
    std::vector<Diagnostic> diagnostics;
};

/// One flag after resolution: its declaration, canonical value and where that came from.
struct ResolvedFlag {
    FlagSpec spec;
    std::string value; ///< canonical: true/false, decimal, the declared choice, or the text
    FlagSource source = FlagSource::default_value;
};

/// Typed flag values of one environment, with their defines, tier and restore set.
class ResolvedFlags {
  public:
    /// A boolean flag's value; NotFoundError for an undeclared name, ConfigError for another type.
    [[nodiscard]] bool get_bool(std::string_view name) const;
    /// An integer flag's value.
    [[nodiscard]] std::int64_t get_int(std::string_view name) const;
    /// A string or enumeration flag's value (the declared spelling of a choice).
    [[nodiscard]] const std::string& get_string(std::string_view name) const;
    /// Where `name`'s value came from.
    [[nodiscard]] FlagSource source(std::string_view name) const;
    /// Every declared flag, in declaration order.
    [[nodiscard]] const std::vector<ResolvedFlag>& flags() const { return flags_; }
    /// NAME -> VALUE for each flag with a define (booleans as 1/0), to merge into compiles.
    [[nodiscard]] std::map<std::string, std::string> defines() const;
    /// Merges defines() into a compile's `defines` (CompileOptions::defines); ConfigError when
    /// one is already there with another value.
    void apply_to(std::map<std::string, std::string>& defines) const;
    /// The '+'-joined tags of the tier rules that hold, or the declared default ("base").
    [[nodiscard]] const std::string& tier() const { return tier_; }
    /// Every variable under a registered prefix that is set: unsetting them gives all defaults.
    [[nodiscard]] const std::vector<std::string>& restore_set() const { return restore_set_; }
    /// Diagnostics that did not stop resolution (unknown names under a warning-only prefix).
    [[nodiscard]] const std::vector<Diagnostic>& warnings() const { return warnings_; }

  private:
    friend class FlagRegistry;
    [[nodiscard]] const ResolvedFlag& find(std::string_view name) const;
    std::vector<ResolvedFlag> flags_;
    std::string tier_;
    std::vector<std::string> restore_set_;
    std::vector<Diagnostic> warnings_;
};

/// Declared flags, the prefixes they live under and the tier rules; resolves an environment.
class FlagRegistry {
  public:
    /// Every variable under `prefix` must be declared; `unknown` says how an undeclared one is
    /// reported.
    void add_prefix(std::string prefix, Severity unknown = Severity::error);
    /// Adds a flag; ConfigError on a bad name, duplicate, bad default, range, choices or define.
    void declare(FlagSpec spec);
    /// Adds a tier rule for a declared flag; ConfigError when the value does not parse.
    void add_tier_rule(TierRule rule);
    /// The tier when no rule holds (initially "base").
    void set_tier_default(std::string tier);
    /// Reads prefix, flags and tier rules from a TOML file; ConfigError at file:line:col.
    void load_toml(const std::filesystem::path& file);
    /// load_toml() on text in memory; `source_name` is the file name errors show.
    void load_toml_text(std::string_view text, const std::string& source_name);

    /// The declaration of `name`, or nullptr.
    [[nodiscard]] const FlagSpec* find(std::string_view name) const;
    /// Every declared flag, in declaration order.
    [[nodiscard]] const std::vector<FlagSpec>& flags() const { return flags_; }
    /// Registered prefixes with their severity for undeclared names.
    [[nodiscard]] const std::vector<std::pair<std::string, Severity>>& prefixes() const {
        return prefixes_;
    }
    /// The tier rules, in declaration order.
    [[nodiscard]] const std::vector<TierRule>& tier_rules() const { return tier_rules_; }

    /// Resolves `env`; FlagError listing every error (typo, bad value, missing required flag).
    [[nodiscard]] ResolvedFlags resolve(const Environment& env) const;
    /// resolve() on the process environment: what an engine does at start.
    [[nodiscard]] ResolvedFlags resolve() const;
    /// Variables under a registered prefix that are set in `env` (never throws).
    [[nodiscard]] std::vector<std::string> restore_set(const Environment& env) const;
    /// The declared flags as a Markdown table (flag, type, default, doc).
    [[nodiscard]] std::string markdown() const;

  private:
    void check_requires() const;
    std::vector<std::pair<std::string, Severity>> prefixes_;
    std::vector<FlagSpec> flags_;
    std::vector<TierRule> tier_rules_;
    std::string tier_default_ = "base";
};

/// kjit's own KJIT_* flags under the KJIT_ prefix; an application adds its prefix and flags.
FlagRegistry builtin_flags();

/// builtin_flags() resolved against the process environment: resolved at the first call and
/// kept for the process (later changes to the environment are not seen). FlagError when the
/// environment has an error; every call then throws it again. The one way jit/ and runtime/
/// read a KJIT_* variable.
const ResolvedFlags& process_flags();

/// The names of kjit's own flags.
inline constexpr std::string_view kFlagDriverLibrary = "KJIT_DRIVER_LIBRARY";
inline constexpr std::string_view kFlagCacheDir = "KJIT_CACHE_DIR";
inline constexpr std::string_view kFlagCacheMaxBytes = "KJIT_CACHE_MAX_BYTES";
inline constexpr std::string_view kFlagCacheLockWait = "KJIT_CACHE_LOCK_WAIT";
inline constexpr std::string_view kFlagCompileJobs = "KJIT_COMPILE_JOBS";
inline constexpr std::string_view kFlagCompileWorker = "KJIT_COMPILE_WORKER";
inline constexpr std::string_view kFlagKernelDir = "KJIT_KERNEL_DIR";
inline constexpr std::string_view kFlagLedger = "KJIT_LEDGER";
inline constexpr std::string_view kFlagLedgerFile = "KJIT_LEDGER_FILE";
inline constexpr std::string_view kFlagNoCache = "KJIT_NO_CACHE";
inline constexpr std::string_view kFlagSweepMaxVariants = "KJIT_SWEEP_MAX_VARIANTS";
inline constexpr std::string_view kFlagTestSeed = "KJIT_TEST_SEED";
inline constexpr std::string_view kFlagAllowUnreadDefines = "KJIT_ALLOW_UNREAD_DEFINES";
inline constexpr std::string_view kFlagRemoteCache = "KJIT_REMOTE_CACHE";
inline constexpr std::string_view kFlagRemotePrefix = "KJIT_REMOTE_PREFIX";
inline constexpr std::string_view kFlagRemoteSecret = "KJIT_REMOTE_SECRET";
inline constexpr std::string_view kFlagRemoteUnsigned = "KJIT_REMOTE_UNSIGNED";
inline constexpr std::string_view kFlagRemoteTimeout = "KJIT_REMOTE_TIMEOUT_MS";
inline constexpr std::string_view kFlagRemoteLease = "KJIT_REMOTE_LEASE_MS";

} // namespace kjit
