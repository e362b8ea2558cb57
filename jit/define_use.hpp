#pragma once
// Whether a kernel source reads the defines injected into it: a text-level check (comments
// and string literals skipped, no preprocessing), cheap enough for every Engine::prepare.

#include "core/diagnostic.hpp"
#include "jit/shape_file.hpp"
#include "jit/sources.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit {

/// Where a kernel's compile #defines a macro again: `file` at `line`, and the `#undef` before
/// it that dropped the earlier value (`undef_line`, 0 when none).
struct Redefinition {
    const SourceFile* file = nullptr;
    int line = 0;
    int undef_line = 0;
};

/// An injected define whose value never reaches the code: no file of the kernel's compile
/// names it, or the compile #defines it again (replaced_defines; NVRTC keeps the file's value
/// over a -D and warns at most).
struct UnreadDefine {
    std::string name;
    std::vector<std::string> nearest; ///< macros the sources do name that are close to it
    std::optional<Redefinition> redefined;
};

/// What becomes of define `u.name`, after "define NAME": "is never read by READERS" with the
/// nearest names, or redefined_reason() with the file's path.
std::string unread_reason(const UnreadDefine& u, const std::string& readers);

/// "is #defined again at FILE:LINE with no #if that tests NAME around it: ...", the file as
/// `file` (its path or its name in the set); "is #undef'd at FILE:U and #defined again at
/// FILE:LINE: ..." after an #undef.
std::string redefined_reason(std::string_view name, const Redefinition& r, const std::string& file);

/// The macros that `kernel`'s compile #defines where an injected value would be replaced: a
/// #define with no enclosing #if, #ifdef, #ifndef or #elif that names the macro (`#ifndef X`,
/// `#if !defined(X) || X == 0` and the branches after `#if defined(X)` all leave the injected
/// value in charge), or one after an #undef of it outside such a conditional. Follows the
/// #include directives of the set's files that spell a file of `sources` (the conditionals
/// around an #include apply to the file it names; `#if 0` blocks skipped; a computed #include
/// not followed), each file once; the first such #define of each macro.
std::map<std::string, Redefinition, std::less<>> replaced_defines(const SourceSet& sources,
                                                                  const SourceFile& kernel);

/// Whether `word` occurs in `text` as an identifier, outside comments, string and character
/// literals (the same text-level reading as unread_defines).
bool names_identifier(std::string_view text, std::string_view word);

/// The defines of `defines` whose name occurs as an identifier in none of the files `kernel`
/// compiles with (the kernel and sources.includable(kernel)), or that the compile #defines
/// again (replaced_defines), in name order.
std::vector<UnreadDefine> unread_defines(const SourceSet& sources, const SourceFile& kernel,
                                         const std::map<std::string, std::string>& defines);

/// unread_defines() of kernel `label` (compiled from `kernel` with `defines`, its resolved
/// defines) as diagnostics of `severity`, each at the define's place in `places` when it has one
/// (its name in a shape file, its key in a contract, a tuned entry's line):
/// `kernel 'LABEL': define X is never read by PATH or the files it includes`.
std::vector<Diagnostic> unread_define_diagnostics(const SourceSet& sources,
                                                  const SourceFile& kernel, const std::string& label,
                                                  const std::map<std::string, SourceLocation>& places,
                                                  const std::map<std::string, std::string>& defines,
                                                  Severity severity);

/// Where each define of `spec` is written: its name in the shape file.
std::map<std::string, SourceLocation> define_places(const KernelSpec& spec);

/// The refusal of `found` (unread_define_diagnostics of severity error): a ConfigError at the
/// first one's place; with `allow` (KJIT_ALLOW_UNREAD_DEFINES: a define only a toolkit header
/// reads) a warning for each instead.
void refuse_unread_diagnostics(const std::vector<Diagnostic>& found, bool allow);

/// A define given directly (`what` says where from, e.g. "-D") that `readers` never read: a
/// ConfigError naming it and the nearest macro they do name; with KJIT_ALLOW_UNREAD_DEFINES (a
/// define only a toolkit header reads) a warning instead.
void refuse_unread_define(const UnreadDefine& unread, const std::string& what,
                          const std::string& readers);

/// For defines given directly (`kjit compile -D`, kjit.compile): ConfigError naming the first of
/// `defines` that `kernel` and the files it includes never read (`what` says where it came
/// from, e.g. "-D"), with the nearest macro the sources do name; with KJIT_ALLOW_UNREAD_DEFINES
/// (a define only a toolkit header reads) a warning for each instead.
void require_defines_read(const SourceSet& sources, const SourceFile& kernel,
                          const std::map<std::string, std::string>& defines,
                          const std::string& what);

} // namespace kjit
