#pragma once
// The digest baseline policy `kjit digest record|check` runs, for any application to run the
// same way: where a kernel's baseline file is, which cases a record writes and a check reruns,
// and what a rerun output's digest means against the recorded one.

#include "kernels/contract.hpp"
#include "kernels/host_buffer.hpp"
#include "kernels/shape.hpp"
#include "tuning/bench.hpp"
#include "tuning/digest.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Where a kernel's baseline is when no file is named: `bench/baselines/KERNEL.toml`, relative.
std::filesystem::path default_baseline_path(std::string_view kernel);

/// The baseline file a record or a check uses.
struct BaselineLocation {
    std::filesystem::path path; ///< the named file as given, or the default under the cwd
    bool named = false;         ///< named by the caller (--baseline), not the default
    bool exists = false;        ///< a file is there now
};

/// `file` when it is not empty, else default_baseline_path(kernel) under the current
/// directory (made absolute, so messages say exactly which file).
BaselineLocation locate_baseline(std::string_view kernel, const std::string& file = {});

/// One case a record or a check runs: a shape and a dtype.
struct DigestCase {
    std::string shape; ///< canonical text, keys in the contract's order: "rows=1,n=7168"
    ShapeValues values;
    DType dtype = DType::f32;
};

/// The cases a record or a check is asked for, as a user writes them.
struct DigestSelection {
    std::vector<std::string> shapes; ///< each may hold several, ';'-separated
    std::vector<std::string> dtypes; ///< "f32", "bf16"
};

/// The cases a record runs: the selected shapes (the contract's digest shapes when none) times
/// the selected dtypes (all the contract's when none); ConfigError on a bad shape or dtype.
std::vector<DigestCase> record_cases(const KernelContract& contract,
                                     const DigestSelection& selection);

/// The baseline a record adds its cases to: the file at `at` when it exists (ConfigError when
/// it is for another kernel or was recorded with another seed), else an empty one for
/// `contract` and `seed`.
Baseline baseline_to_record(const BaselineLocation& at, const KernelContract& contract,
                            std::uint64_t seed);

/// The case a record writes: `c` run with `defines` by what `provenance` names, and the digest
/// of every output in `outputs`.
BaselineCase recorded_case(const DigestCase& c, const Defines& defines,
                           const Provenance& provenance, std::span<const HostBuffer> outputs);

/// Whether a record may write its file: not when any output still holds the canary somewhere
/// (`unwritten`: outputs with unwritten elements).
bool record_writes_file(int unwritten);

/// The baseline a check compares against, read from `at`; ConfigError when the file does not
/// exist (saying so, and where the default is looked for), is malformed or is for another
/// kernel.
Baseline baseline_to_check(const BaselineLocation& at, const KernelContract& contract);

/// A recorded case a check reruns.
struct CheckedCase {
    const BaselineCase* recorded = nullptr; ///< into the baseline it was selected from
    DigestCase key;                         ///< its shape, re-read against the contract
    Defines defines;                        ///< the recorded defines with the overrides applied
};

/// The recorded cases a check reruns: every case of `baseline`, narrowed to the selected shapes
/// and dtypes, each with `overrides` (NAME=VALUE) over its recorded defines; ConfigError at a
/// case whose shape the contract no longer reads, for a selected shape with no recorded case,
/// and when no case is left.
std::vector<CheckedCase> checked_cases(const Baseline& baseline, const KernelContract& contract,
                                       const DigestSelection& selection,
                                       std::span<const std::string> overrides = {});

/// What a rerun output is against its recorded digest.
enum class DigestVerdict {
    identical,    ///< IDENTICAL: the recorded digest, element count and dtype
    not_recorded, ///< DIFFERS: the baseline records no output of this name
    resized,      ///< DIFFERS: recorded with another element count or dtype
    differs,      ///< DIFFERS: the same size and dtype, another digest
};

/// The verdict of `output`, whose digest is `digest`, against `recorded` (nullptr: none).
DigestVerdict judge_output(const OutputDigest* recorded, const HostBuffer& output,
                           std::uint64_t digest);

/// The recorded output of `c` named `name`, or nullptr.
const OutputDigest* recorded_output(const BaselineCase& c, std::string_view name);

} // namespace kjit
