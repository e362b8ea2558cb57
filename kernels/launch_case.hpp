#pragma once

#include "kernels/case_buffers.hpp"
#include "jit/compiler.hpp"
#include "kernels/plan.hpp"
#include "runtime/launch.hpp"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace kjit {

/// Finds a loaded entry point by name (an engine's prepared module, a Module).
using EntryLookup = std::function<const Function&(const std::string& entry)>;

/// The Function of each step of `plan`: `lookup(entry)` for launches, nullptr for copies.
std::vector<const Function*> step_functions(const CasePlan& plan, const EntryLookup& lookup);

/// What is wrong with launching `step` of `plan` through `entry` (its parameters and launch
/// bound as the PTX states them): the parameter count, each argument's size and kind, a block
/// over `__launch_bounds__`; "" when nothing. What the first launch would refuse, found
/// without a GPU.
std::string launch_problem(const CasePlan& plan, const StepPlan& step, const EntryParams& entry);

/// What is wrong with launch step `index` of `plan` (a launch step) as `compiled` (from
/// `source_file`) holds its entry point: launch_problem(), or "FILE has no entry point 'x'; did
/// you mean y? (entry points: ...)", each by its C++ name and its symbol; "" when nothing.
/// `where_key` is set to the key of the contract's `where` the problem belongs to: "step N",
/// "step N entry" or "step N block[0]".
std::string step_launch_problem(const CasePlan& plan, std::size_t index,
                                const CompiledKernel& compiled, const std::string& source_file,
                                std::string& where_key);

/// A compile that failed because a step's qualified entry (`blas::axpi`) names nothing: NVRTC
/// reports it in the name map it builds from the name expressions (`__nv_name_map:2:31: error:
/// namespace "blas" has no member "axpi"`), a place in no file. "step K names entry 'E', which
/// no kernel of SOURCE_FILE is (NVRTC: ...)" with `where_key` "step K entry" (the contract's
/// `where`); "" when `error` is about no step's entry.
std::string unknown_entry_problem(const CasePlan& plan, const std::string& error,
                                  const std::string& source_file, std::string& where_key);

/// What is wrong with the C++ types of `plan`'s launch arguments, which the PTX does not keep:
/// there an 8-byte integer and a pointer are both `.u64` and a pointer has no element type. So
/// a buffer passed where the kernel takes an integer, an integer scalar where it takes a
/// pointer, or an f32 buffer where it takes a `__nv_bfloat16*` (among float, double, __half and
/// __nv_bfloat16 elements) pass every launch check and only compute the wrong thing. NVRTC's
/// front end answers: the kernel of `sources` with `options` (the compile the plan's launches
/// passed step_launch_problem with) and a static_assert per argument after it. "" when every
/// argument fits or an entry is a mangled symbol (no C++ to name it by); else the first
/// mismatch, with `where_key` set to "argument NAME type" (or what kept the types from being
/// read, at "step 1 entry").
std::string launch_type_problem(const CasePlan& plan, const SourceSet& sources,
                                const CompileOptions& options, std::string& where_key);

/// Enqueues the pipeline of `plan` on `stream` (no synchronization): buffer i of the plan at
/// `buffers[i]`, launch step s through `functions[s]`. Returns the last launch's configuration.
LaunchConfig enqueue_case(const CasePlan& plan, std::span<const Function* const> functions,
                          std::span<const CUdeviceptr> buffers, CUstream stream);

/// Fills the outputs with the canary, runs the pipeline once on input set 0 on a stream of its
/// own, waits, and returns every output as `plan` sizes it (`buffers` may be larger: they may
/// serve several plans); `launched`, when given, receives the last launch's configuration.
std::vector<HostBuffer> run_case_once(const CasePlan& plan,
                                      std::span<const Function* const> functions,
                                      CaseBuffers& buffers, LaunchConfig* launched = nullptr);

} // namespace kjit
