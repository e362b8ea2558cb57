#pragma once
// `kjit sig --verify`: each listed kernel's parameter layout checked against the `.param` list
// NVRTC writes for its `.entry` in the PTX.

#include "jit/compile_options.hpp"
#include "jit/include_resolver.hpp"
#include "lint/signature.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::lint {

/// One `.param` of a PTX `.entry`.
struct PtxParam {
    long long size = 0;   ///< bytes: the type's size times the array length
    long long align = 0;  ///< `.align A` before the type, else the type's size
    long long offset = 0; ///< in the argument buffer: the previous end aligned to `align`
};

/// Every `.entry` of `ptx` by symbol, with its parameters in order.
std::map<std::string, std::vector<PtxParam>> ptx_entries(std::string_view ptx);

/// "ns::name" for the Itanium symbol of a function ("_ZN2ns4nameEPf"), the symbol itself when it
/// is not mangled (`extern "C"`); the template arguments and parameter types are dropped.
std::string symbol_name(std::string_view symbol);

/// What --verify found.
struct VerifyReport {
    std::size_t units = 0;        ///< translation units compiled to PTX
    std::size_t failed_units = 0; ///< translation units NVRTC did not compile
    std::size_t checked = 0;      ///< kernels compared with their `.entry`
    std::size_t agreed = 0;       ///< kernels whose every parameter matched in size and offset
    std::size_t unchecked = 0;    ///< kernels not compared (template, unknown layout, no unit)
    /// `.cu` files NVRTC compiles to no `.entry` (a kernel behind a false `#if`, a template
    /// nothing instantiates): a kernel source that no launch can use, so a failure.
    std::size_t empty_units = 0;
    /// One line per translation unit NVRTC did not compile, with its first error.
    std::vector<std::string> notes;
};

/// Compiles each unit of `report` to PTX with NVRTC (`options`, with `ptx` set; instantiations
/// added as explicit instantiations) and compares every kernel of known layout with its
/// `.entry`: a difference is an error diagnostic on the kernel, a kernel that could not be
/// compared gets a note saying why. A `.cu` of the report with no kernel listed is compiled
/// too: one whose PTX has no `.entry` is an error line.
VerifyReport verify(SignatureReport& report, const SourceSet& sources, CompileOptions options);

/// `verify: A of C kernel(s) agree with the PTX (U not checked); T translation unit(s)
/// compiled, F did not[, E compiled to no entry point]`, after an error line per unit that did
/// not compile (its kernels are unverified, so `kjit sig --verify` fails: exit 1) or compiled to
/// no entry point.
std::string format_verify(const VerifyReport& report);

} // namespace kjit::lint
