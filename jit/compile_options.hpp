#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit {

/// Everything that shapes an NVRTC compile, as typed fields; argv() renders NVRTC's flags.
struct CompileOptions {
    std::string arch = "sm_90";  ///< a real architecture: the output is CUBIN for it
    std::string std = "c++17";   ///< -std=
    std::map<std::string, std::string> defines; ///< -DNAME=VALUE, sorted by name
    bool fmad = true;            ///< --fmad; false keeps a*b+c as two roundings
    bool fast_math = false;      ///< --use_fast_math
    bool lineinfo = false;       ///< -lineinfo
    bool ptx = false;            ///< also return the PTX (compiled for the virtual arch)
    /// Compile to check, not to run: PTX for the virtual arch of `arch`, unoptimized (-G), and
    /// no CUBIN. The front end's errors, the entry points, their parameters and launch bounds
    /// and the lowered names are those of the full compile at about a tenth of its time; what
    /// only the optimizer or ptxas reports (register or shared-memory overflow) is not. What a
    /// dry run compiles: never cached, and never loadable.
    bool check_only = false;
    /// Accept a program that compiles to no entry point (a header probe, a unit compiled for
    /// its PTX); for a kernel, to be launched, it is an error.
    bool entry_optional = false;
    /// A kernel compiled before the name expressions that instantiate its templates are known
    /// (the audit's compiles): a source that names `template` may compile to no entry point
    /// yet. Otherwise (a launch, `kjit compile`) a template no name expression instantiates
    /// leaves nothing to launch, an error like any other source without an entry point.
    bool templates_later = false;
    /// -I: extra include directories (a CUTLASS checkout, say); the cache key covers the
    /// content of every file under them, not only their paths.
    std::vector<std::string> include_dirs;
    /// -I after include_dirs: the CUDA toolkit's own include directories (<cuda_bf16.h>,
    /// <cub/...>); the cache key covers the toolkit's version, found beside them.
    std::vector<std::string> toolkit_include_dirs;
    /// With toolkit_include_dirs empty, search default_toolkit_include_dirs() (jit/toolkit.hpp)
    /// after include_dirs when the kernel includes a header its set lacks and they hold
    /// (toolkit_dirs_for). Off for a bare compile(); the Engine, the audit and the kjit verbs
    /// turn it on.
    bool toolkit_headers = false;
    /// NVRTC name expressions ("scale<128, float>"): each template instantiation is compiled
    /// and its lowered (mangled) name kept; the cache key covers them.
    std::vector<std::string> name_expressions;
    std::vector<std::string> extra;        ///< passed through verbatim, after the others

    /// What NVRTC compiles for: `arch`, or its virtual compute_NN for a check-only compile.
    [[nodiscard]] std::string target() const;
    /// The NVRTC flags, in a fixed order (defines sorted by name).
    [[nodiscard]] std::vector<std::string> argv() const;
    /// The toolkit include directories the compile searches: toolkit_include_dirs, else the
    /// default ones under toolkit_headers.
    [[nodiscard]] std::vector<std::string> toolkit_dirs() const;
    /// "NAME=VALUE NAME=VALUE" or "(none)".
    [[nodiscard]] std::string defines_text() const;
    /// Refuses what NVRTC would take silently or misread, as ConfigError: an arch that is not
    /// a real one (sm_NN, sm_NNa, sm_NNf: `compute_90` is virtual and its CUBIN is empty), a
    /// define whose name is not a C identifier or whose value holds a line break or a NUL, an
    /// include directory that is not a directory. (check_options() also asks NVRTC.)
    void check() const;
};

/// True for a real architecture's name: "sm_" then digits, then optionally 'a' or 'f'.
bool is_real_arch(const std::string& arch);

/// Why `arch` names no machine code (a virtual `compute_NN`, a malformed name), or empty for a
/// real architecture. Whether this NVRTC knows it is asked at the compile (check_options()).
std::string arch_problem(const std::string& arch);

/// "NAME=VALUE" as {NAME, VALUE}; "NAME" alone as {NAME, "1"}, as nvcc reads it. Not checked.
std::pair<std::string, std::string> split_define(const std::string& assignment);

/// The first binary arithmetic operator of define value `value` outside parentheses (`${...}` an
/// operand), e.g. "+" of "${block} + 256", or a comma outside template brackets ("," of
/// "128, 2"); "" when there is none. A macro expands as text, so
/// such a value changes meaning inside the source's own expressions (`BLOCK / 32`): every
/// define is refused with one (CompileOptions::check, add_define, the shape files).
std::string open_operator(std::string_view value);
/// What is wrong with define NAME's value (a line break, a NUL, an operator or a comma outside
/// parentheses: open_operator), said for `name`; "" when nothing.
std::string define_value_problem(const std::string& name, const std::string& value);
/// Parses "NAME=VALUE" (or "NAME", meaning 1) into defines; ConfigError on a bad name, or a
/// value with a line break, a NUL or an operator outside parentheses (open_operator).
void add_define(std::map<std::string, std::string>& defines, const std::string& assignment);

} // namespace kjit
