#pragma once

#include "core/diagnostic.hpp"
#include "kernels/dtype.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

class SourceSet;

/// Defines by name, as injected into a compile.
using Defines = std::map<std::string, std::string>;

/// What an argument is to the pipeline.
enum class ArgRole {
    input,     ///< generated on the host, read by the kernel
    output,    ///< filled with the canary, written by the kernel, checked
    in_out,    ///< generated, read and written in place, checked
    workspace, ///< scratch the steps share: filled with the canary, never checked
    scalar,    ///< passed by value
};

/// The element type of a buffer, or the type of a scalar.
enum class ArgType {
    dtype, ///< buffers: the case's dtype
    f32,
    bf16, ///< buffers only
    i32,  ///< scalars only, as are u32, i64, u64 and f64
    u32,
    i64,
    u64,
    f64,
};

/// One argument: a buffer or a scalar. Expressions read shape entries, numeric defines,
/// launch parameters and `dtype_size` (bytes per element of the case's dtype).
struct ContractArg {
    std::string name;
    ArgRole role = ArgRole::input;
    ArgType type = ArgType::dtype;
    std::string count; ///< buffers: elements, an expression ("rows * n")
    std::string value; ///< scalars: an expression rounded to the type ("1e-6", "1 / sqrt(dk)")
    /// Inputs and in-out buffers: element i is uniform(seed, i) * scale + offset in fp32,
    /// rounded to the dtype; both expressions, evaluated in double and rounded to float.
    std::string scale = "1";
    std::string offset = "0";
    /// Outputs and in-out buffers: the relative L2 error a check allows; 0: 1e-6 for f32,
    /// 1e-2 for bf16.
    double tolerance = 0;
};

/// A value launch expressions read that is not a define (so changing it needs no compile),
/// with its default expression; a sweep may sweep it.
struct LaunchParam {
    std::string name;  ///< "ROWS_PER_LAUNCH"
    std::string value; ///< the default: "rows"
};

/// A condition every case must meet; `{NAME}` in the message shows that name's value.
struct Precondition {
    std::string expr;    ///< "dk % DR_KSPLIT == 0 && dk <= DR_MAX_DK"
    std::string message; ///< "dk={dk} must be a multiple of DR_KSPLIT={DR_KSPLIT}"
};

/// One step of a contract's pipeline: a kernel launch, or a device-to-device copy of one
/// buffer into another of the same size.
struct PipelineStep {
    enum class Kind { launch, copy };
    Kind kind = Kind::launch;
    std::map<DType, std::string> entry;  ///< launch: the entry point per dtype of the contract
    std::vector<std::string> grid{"1"};  ///< launch: 1 to 3 expressions
    std::vector<std::string> block{"1"}; ///< launch: 1 to 3 expressions
    std::string smem = "0";              ///< launch: dynamic shared memory in bytes
    /// Launch: the kernel's parameters by argument name, in order; empty: every argument, in
    /// the contract's order.
    std::vector<std::string> args;
    std::string from, to; ///< copy: buffer names
    /// Launch: the one reports describe (the sweep table's geometry and occupancy, `kjit
    /// check`'s entry); at most one step; none: the last launch.
    bool main = false;
};

/// A case `kjit check` runs: a shape, in some dtypes, with defines over the contract's.
struct CheckShape {
    std::string shape;                ///< "rows=4096,n=7168"
    std::vector<DType> dtypes;        ///< empty: every dtype of the contract, in its order
    std::vector<std::string> defines; ///< NAME=VALUE over the contract's defaults
};

/// A kernel's host contract, written once: what check, bench, digest, sweeps, the tests and
/// an application read to build its inputs, launch it, count its bytes and check it. Plain
/// data and expression strings, so that a TOML file can declare one as well; the float64
/// reference is a function registered by name (kernels/registry.hpp).
struct KernelContract {
    std::string name;                    ///< what verbs and sweep files name: "rms_norm"
    std::string source;                  ///< the kernel source SOURCE.cu; empty: `name`
    std::vector<std::string> shape_keys; ///< every shape gives exactly these, in this order
    std::vector<DType> dtypes;           ///< the first is the default
    Defines defines; ///< always injected unless overridden: every knob launch and reference read
    std::vector<LaunchParam> launch_params;
    std::vector<ContractArg> args; ///< buffers and scalars; inputs are seeded in this order
    std::vector<Precondition> preconditions;
    std::vector<PipelineStep> pipeline; ///< run in order on one stream
    std::string bytes;       ///< bytes one run of the pipeline moves (expression; empty: unknown)
    std::string flops;       ///< FLOPs of one run (expression; empty: unknown)
    std::string reference;   ///< the registered float64 reference; empty: none
    /// With no float64 reference: `kjit check` compares each output with the same pipeline
    /// compiled with these defines over the case's (`SPLIT_K = 1`: the sum in one piece), by
    /// the outputs' tolerances. Empty: none.
    Defines reference_defines;
    std::string bench_shape; ///< `kjit bench` without --shape
    std::vector<CheckShape> check_shapes;   ///< `kjit check`
    std::vector<std::string> digest_shapes; ///< `kjit digest record` without --shapes
    /// Where each expression is written, for a contract read from a file (empty in code): by
    /// what the planner calls it, "step 1 grid[0]", "step 1 smem", "argument x count", "bytes";
    /// "step 1 entry" and "step 1" (its arguments) for what a dry run checks; "define NAME" for
    /// each of [defines], "reference define NAME" for each reference define; "[[check]] K" for
    /// the K-th check case's table and "[[check]] K define NAME" for each of its defines.
    std::map<std::string, SourceLocation> where;

    /// The kernel source's name: `source`, or `name` when that is empty.
    [[nodiscard]] const std::string& source_name() const { return source.empty() ? name : source; }
    /// The launch steps' entries that are name expressions, not exported names ("scale<float>",
    /// "ns::fill<4>"): what a compile of the contract's kernel lists for NVRTC to instantiate
    /// and name, so that a step finds its entry point as written. With `dtype`, that dtype's
    /// alone (a define set may suit one instantiation and not another).
    [[nodiscard]] std::vector<std::string>
    name_expressions(std::optional<DType> dtype = std::nullopt) const;
};

/// An input buffer of the case's dtype: element i is uniform(seed, i) * scale + offset.
ContractArg input_arg(std::string name, std::string count, std::string scale = "1",
                      std::string offset = "0");
/// An output buffer of the case's dtype; `tolerance` 0: the dtype's (see ContractArg).
ContractArg output_arg(std::string name, std::string count, double tolerance = 0);
/// A scalar of `type` whose value is the expression `value`.
ContractArg scalar_arg(std::string name, ArgType type, std::string value);
/// A launch of `entry` (per dtype) over `grid` and `block`, passing `args` (empty: all).
PipelineStep launch_step(std::map<DType, std::string> entry, std::vector<std::string> grid,
                         std::vector<std::string> block, std::vector<std::string> args = {},
                         std::string smem = "0");
/// A device copy of buffer `from` into buffer `to`.
PipelineStep copy_step(std::string from, std::string to);

/// "input", "output", "in_out", "workspace" or "scalar".
std::string_view arg_role_name(ArgRole role);
/// "dtype", "f32", "bf16", "i32", "u32", "i64", "u64" or "f64".
std::string_view arg_type_name(ArgType type);
/// The type named `name`; ConfigError naming the known ones otherwise.
ArgType parse_arg_type(std::string_view name);
/// True for roles whose buffers are generated on the host (input, in_out).
bool is_generated(ArgRole role);
/// True for roles whose buffers are checked after a run (output, in_out).
bool is_checked(ArgRole role);

/// Checks the contract's structure and compiles each expression against the names it may
/// read; ConfigError "contract NAME: ..." at the first mistake. Shapes are checked too.
void validate_contract(const KernelContract& contract);

namespace detail {
/// The structural part of validate_contract: names, roles, types, steps (no expressions).
void check_contract_structure(const KernelContract& contract);
} // namespace detail

/// The contract's [defines] that its kernel source (in `sources`) and the files it includes
/// never read, as errors at each define's key in the contract file (unread_define_diagnostics;
/// no place for a contract written in code): every case, sweep variant and reference would
/// inject it for nothing, most often a misspelt knob. Nothing when `sources` lacks the kernel.
std::vector<Diagnostic> unread_contract_defines(const KernelContract& contract,
                                                const SourceSet& sources);

/// The defines of its `[[check]]` cases that the kernel never reads, each at its key in the
/// contract file (its name "C ([[check]] k)" for the contract C's k-th case), the same way; a
/// name the contract's [defines] has is left to unread_contract_defines. A case's define reaches
/// only that case's compile, so kjit check and the audit report these; sweeps do not.
std::vector<Diagnostic> unread_check_defines(const KernelContract& contract,
                                             const SourceSet& sources);

/// `defines` with the contract's reference defines over them: what `kjit check` compares a
/// case with when the contract has no float64 reference.
Defines with_reference_defines(const KernelContract& contract, Defines defines);

/// Why a check case with `defines` (over the contract's) compares nothing: with no float64
/// reference, its defines equal its reference's (every reference define already set to its
/// reference value), so `kjit check` would compare the pipeline with itself; "" otherwise.
std::string self_reference_problem(const KernelContract& contract, const Defines& defines);

/// Every field in one canonical text: equal texts, equal contracts (a results-cache key).
std::string contract_text(const KernelContract& contract);

} // namespace kjit
