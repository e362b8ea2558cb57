#pragma once
// Whether a kernel source reads the defines injected into it: a text-level check (comments
// and string literals skipped, no preprocessing), cheap enough for every Engine::prepare.

#include "core/diagnostic.hpp"
#include "jit/shape_file.hpp"
#include "jit/sources.hpp"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Where a kernel's compile #defines a macro again: `file` at `line`, and the `#undef` before
/// it that dropped the earlier value (`undef_file` at `undef_line`; 0 when none).
struct Redefinition {
    const SourceFile* file = nullptr;
    int line = 0;
    const SourceFile* undef_file = nullptr;
    int undef_line = 0;
};

/// An injected define whose value never reaches the code: no line of the kernel's compile
/// reads it (only its own `#ifndef` default, a skipped branch or the body of a macro nothing
/// expands names it), or the compile #defines it again (replaced_defines; NVRTC keeps the
/// file's value over a -D and warns at most).
struct UnreadDefine {
    std::string name;
    std::vector<std::string> nearest; ///< macros the sources do name that are close to it
    std::optional<Redefinition> redefined;
    /// Named, but only in branches the compile is known to skip (`#if 0`, `#ifndef X` with X
    /// injected).
    bool only_skipped = false;
    /// Named only by its own default, `#ifndef NAME` over `#define NAME` (the #ifndef's file and
    /// line; `undef_*` unused), which the injected value skips.
    std::optional<Redefinition> default_at{};
    /// Named only in the body of this macro (and others), which nothing expands.
    std::string unexpanded_macro{};
};

/// What becomes of define `u.name`, after "define NAME": redefined_reason() with the file's
/// path, "is read by READERS only in its own default / the body of macro M / branches the
/// compile skips", or "is never read by READERS" with the nearest names.
std::string unread_reason(const UnreadDefine& u, const std::string& readers);

/// "is #defined again at FILE:LINE with no #if that tests NAME around it: ...", or "is #undef'd
/// at FILE:U and #defined again at FILE:LINE: ..."; each file by its path, else by its name in
/// the set.
std::string redefined_reason(std::string_view name, const Redefinition& r, bool by_path);

/// The defines of `defines` (injected into `kernel`'s compile) whose value the compile replaces:
/// a `#define NAME` reached with no open conditional that tests NAME and that kjit cannot tell
/// (`#if !defined(X) || X == 0` leaves the injected value in charge), or after an `#undef NAME`,
/// where a line after it (or a macro body, which may expand anywhere) reads NAME: one after the
/// last read replaces nothing.
/// Conditionals kjit can tell are followed: `#ifdef N`, `#ifndef N`, `#if [!]defined(N)` over
/// the injected defines, NVRTC's own (__CUDACC_RTC__, __CUDA_ARCH__) and the #undefs so far,
/// `#if 0`, `#if 1`, and the #else and #elif after them, so `#ifndef X` guards and `#ifdef X`
/// does not. Follows the #include directives that spell a file of `sources` (a computed
/// #include, or a header found through an include directory, is not read), each file once;
/// the first such #define of each name.
std::map<std::string, Redefinition, std::less<>>
replaced_defines(const SourceSet& sources, const SourceFile& kernel,
                 const std::map<std::string, std::string>& defines);

/// Whether `word` occurs in `text` as an identifier, outside comments, string and character
/// literals (the same text-level reading as unread_defines).
bool names_identifier(std::string_view text, std::string_view word);

/// The defines of `defines` that no line of the files `kernel` compiles with (the kernel and
/// sources.includable(kernel)) reads: outside the branches the compile is known to skip
/// (replaced_defines follows the conditionals it can tell), not only in their own `#ifndef`
/// default, and in a macro body only where a read names the macro (transitively; every body
/// once a macro that pastes tokens expands); the injected values and `expressions` (the
/// name expressions the compile instantiates) count as read. Also those the compile #defines
/// again (replaced_defines). In name order.
std::vector<UnreadDefine> unread_defines(const SourceSet& sources, const SourceFile& kernel,
                                         const std::map<std::string, std::string>& defines,
                                         std::span<const std::string> expressions = {});

/// unread_defines() of kernel `label` (compiled from `kernel` with `defines`, its resolved
/// defines) as diagnostics of `severity`, each at the define's place in `places` when it has one
/// (its name in a shape file, its key in a contract, a tuned entry's line):
/// `kernel 'LABEL': define X is never read by PATH or the files it includes`.
std::vector<Diagnostic>
unread_define_diagnostics(const SourceSet& sources, const SourceFile& kernel,
                          const std::string& label,
                          const std::map<std::string, SourceLocation>& places,
                          const std::map<std::string, std::string>& defines, Severity severity,
                          std::span<const std::string> expressions = {});

/// Where each define of `spec` is written: its name in the shape file.
std::map<std::string, SourceLocation> define_places(const KernelSpec& spec);

/// The refusal of `found` (unread_define_diagnostics of severity error): a ConfigError at the
/// first one's place, naming the others on lines of their own, then how
/// KJIT_ALLOW_UNREAD_DEFINES lets them through; with `allow` (a define only a toolkit header
/// reads) a warning for each instead.
void refuse_unread_diagnostics(const std::vector<Diagnostic>& found, bool allow);

/// Defines given directly (`what` says where from, e.g. "-D") that `readers` never read,
/// refused as refuse_unread_diagnostics does (no place: the command line), each with the
/// nearest macro they do name.
void refuse_unread_defines(const std::vector<UnreadDefine>& unread, const std::string& what,
                           const std::string& readers);

/// For defines given directly (`kjit compile -D`, kjit.compile): ConfigError naming each of
/// `defines` that `kernel` and the files it includes never read (`what` says where it came
/// from, e.g. "-D"), with the nearest macro the sources do name; with KJIT_ALLOW_UNREAD_DEFINES
/// (a define only a toolkit header reads) a warning for each instead.
void require_defines_read(const SourceSet& sources, const SourceFile& kernel,
                          const std::map<std::string, std::string>& defines,
                          const std::string& what);

} // namespace kjit
