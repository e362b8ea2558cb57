#pragma once
// The tuned table: the fastest variant of a sweep per kernel, shape, dtype, GPU and arch, in a
// TOML file a project reviews in git. `kjit sweep --record` and `kjit tune` write it; a shape
// file names it (`tuned = "..."`) and each [[kernel]] says which shape it is tuned for, so that
// start-up specialization injects the recorded defines for the device it runs on; `kjit audit`
// reports entries recorded against another version of their kernel's source.

#include "core/diagnostic.hpp"
#include "jit/hash.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

class SourceSet;

/// One recorded winner.
struct TunedEntry {
    std::string kernel; ///< the kernel source: "rms_norm"
    /// The contract whose sweep measured it, when that is not named like its source
    /// ("conv1d_update" of conv1d.cu); empty for the source's own contract. Two contracts of one
    /// source launch different entry points: their entries never stand in for each other.
    std::string contract;
    std::map<std::string, std::int64_t> shape;  ///< the sweep's shape, in its contract's keys
    std::string dtype;                          ///< "f32", "bf16"
    std::string gpu;                            ///< the device's name: "NVIDIA H200"
    std::string arch;                           ///< "sm_90"
    std::string source;                         ///< tuned_source_hash() when recorded (12 hex)
    std::map<std::string, std::string> defines; ///< the winner's swept defines
    double median_us = 0;                       ///< the winner's median
    double baseline_us = 0;                     ///< the sweep's baseline variant's median
    std::string sweep;                          ///< the sweep file it came from
    SourceLocation where{};                     ///< the [[entry]] header (read from a file)

    /// The contract that measured it: `contract`, or the source's own, named like `kernel`.
    [[nodiscard]] const std::string& contract_name() const {
        return contract.empty() ? kernel : contract;
    }
};

/// A declared bucket rule: how a shape value with no exact entry finds one. `pow2`: the value
/// rounded up to a power of two; `nearest`: the entry nearest on a log scale, every other key
/// equal (on a tie the larger value: a lookup does not depend on the order of the file).
struct TunedBucket {
    std::string kernel;
    std::string key;
    std::string rule;       ///< "pow2" or "nearest"
    std::string contract{}; ///< as TunedEntry::contract: the entries the rule reads
    SourceLocation where{};
};

/// What a lookup found: the entry, or nothing, and how.
struct TunedMatch {
    const TunedEntry* entry = nullptr;
    std::string how; ///< "exact", "bucket rows pow2 -> 4096", "nearest rows 3000 -> 4096"
};

/// A tuned table file.
struct TunedTable {
    std::filesystem::path file;
    std::vector<TunedBucket> buckets;
    std::vector<TunedEntry> entries;

    /// Reads `path`; ConfigError at file:line:col for a syntax error, an unknown key, a wrong
    /// type, a bad rule, or two entries for one kernel, shape, dtype, GPU and arch. A file that
    /// does not exist is an empty table (what `kjit tune` starts from).
    static TunedTable load(const std::filesystem::path& path);
    /// Adds `entry`, replacing the one for the same kernel, contract, shape, dtype, GPU and arch.
    void record(TunedEntry entry);
    /// Writes the table to `file` (a temporary beside it, then renamed: a reader never sees
    /// half a table), entries sorted by kernel, GPU, arch, dtype and shape.
    void save() const;
    /// The entry for `kernel` (and `contract`, see TunedEntry) at `shape` on `gpu` and
    /// `arch`: exact shape first, then the kernel's bucket rules; `dtype` "" matches any dtype
    /// and `gpu` "" any GPU of `arch` (the first in file order). A GPU with no entry of the
    /// kernel and dtype on `arch` takes the entries of the first other GPU of `arch` that has
    /// (`how` names it): a configuration tuned for the architecture, not the defaults. No
    /// entry: TunedMatch with entry null.
    [[nodiscard]] TunedMatch lookup(std::string_view kernel,
                                    const std::map<std::string, std::int64_t>& shape,
                                    std::string_view dtype, std::string_view gpu,
                                    std::string_view arch, std::string_view contract = {}) const;

  private:
    /// lookup() among the entries of `gpu` alone ("" any) and the contract `want`.
    [[nodiscard]] TunedMatch lookup_on(std::string_view kernel,
                                       const std::map<std::string, std::int64_t>& shape,
                                       std::string_view dtype, std::string_view gpu,
                                       std::string_view arch, const std::string& want) const;
};

/// The kernel's source and every header it can include, hashed (12 hex digits): what a tuned
/// entry was measured on. NotFoundError when the sources hold no such kernel.
std::string tuned_source_hash(const SourceSet& sources, std::string_view kernel);

/// The entries of `table` that no longer describe the sources: recorded against another
/// version of their kernel's source (or its headers), or naming a kernel the sources lack; one
/// error each, at the entry.
std::vector<Diagnostic> stale_tuned_entries(const TunedTable& table, const SourceSet& sources);

/// The bucket rules of `table` that apply to no entry: their kernel (and contract) has entries,
/// none with their key in its shape (a misspelt key); one error each, at the rule. A rule whose
/// kernel has no entry yet waits for them; one of a kernel `sources` lack is an error too.
std::vector<Diagnostic> idle_tuned_buckets(const TunedTable& table, const SourceSet& sources);

/// "rows=4096,n=7168": a shape as entries and messages print it.
std::string tuned_shape_text(const std::map<std::string, std::int64_t>& shape);

/// "conv1d (conv1d_update)": a kernel source and a contract of it as messages print them; the
/// source alone for its own contract (`contract` empty or named like it).
std::string tuned_kernel_name(std::string_view kernel, std::string_view contract);

} // namespace kjit
