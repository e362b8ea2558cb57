#pragma once
// Inside the linter only: libclang's C API as kjit loads it (lint/libclang.cpp), and the walk
// of a translation unit into a ParsedUnit (lint/libclang_walk.cpp). The clang-c headers are a
// build detail of kjit::lint: this header is not installed and no public header includes it.

#include "lint/libclang.hpp"

#include <clang-c/Index.h>

#include <string>
#include <string_view>

namespace kjit::lint {

// Every entry point kjit uses; the members of Api keep the C names so that calls read as
// libclang's documentation does.
#define KJIT_LIBCLANG_API(X)                                                                       \
    X(clang_createIndex)                                                                           \
    X(clang_disposeIndex)                                                                          \
    X(clang_parseTranslationUnit2)                                                                 \
    X(clang_disposeTranslationUnit)                                                                \
    X(clang_getTranslationUnitCursor)                                                              \
    X(clang_visitChildren)                                                                         \
    X(clang_getCursorKind)                                                                         \
    X(clang_getCursorSpelling)                                                                     \
    X(clang_getCursorExtent)                                                                       \
    X(clang_getCursorLocation)                                                                     \
    X(clang_getCursorType)                                                                         \
    X(clang_Cursor_isMacroFunctionLike)                                                            \
    X(clang_getTypeSpelling)                                                                       \
    X(clang_Type_getSizeOf)                                                                        \
    X(clang_Type_getAlignOf)                                                                       \
    X(clang_getRangeStart)                                                                         \
    X(clang_getRange)                                                                              \
    X(clang_getLocationForOffset)                                                                  \
    X(clang_getExpansionLocation)                                                                  \
    X(clang_getFileName)                                                                           \
    X(clang_getCString)                                                                            \
    X(clang_disposeString)                                                                         \
    X(clang_tokenize)                                                                              \
    X(clang_getTokenSpelling)                                                                      \
    X(clang_disposeTokens)                                                                         \
    X(clang_getNumDiagnostics)                                                                     \
    X(clang_getDiagnostic)                                                                         \
    X(clang_getDiagnosticSeverity)                                                                 \
    X(clang_getDiagnosticLocation)                                                                 \
    X(clang_formatDiagnostic)                                                                      \
    X(clang_disposeDiagnostic)                                                                     \
    X(clang_getInclusions)                                                                         \
    X(clang_getClangVersion)                                                                       \
    X(clang_isInvalidDeclaration)                                                                  \
    X(clang_isCursorDefinition)                                                                    \
    X(clang_getCursorUSR)                                                                          \
    X(clang_getCursorReferenced)                                                                   \
    X(clang_getCursorSemanticParent)                                                               \
    X(clang_Cursor_getMangling)                                                                    \
    X(clang_Cursor_getNumArguments)                                                                \
    X(clang_Cursor_getArgument)                                                                    \
    X(clang_getArrayElementType)                                                                   \
    X(clang_getCanonicalType)                                                                      \
    X(clang_getRangeEnd)                                                                           \
    X(clang_getDiagnosticSpelling)                                                                 \
    X(clang_Cursor_getNumTemplateArguments)                                                        \
    X(clang_Cursor_getTemplateArgumentKind)                                                        \
    X(clang_Cursor_getTemplateArgumentValue)                                                       \
    X(clang_getSpecializedCursorTemplate)

struct Libclang::Api {
#define KJIT_DECLARE(fn) decltype(&::fn) fn = nullptr;
    KJIT_LIBCLANG_API(KJIT_DECLARE)
#undef KJIT_DECLARE

    std::string str(CXString s) const {
        const char* c = clang_getCString(s);
        std::string out = c ? c : "";
        clang_disposeString(s);
        return out;
    }
};

namespace detail {

/// The directory the kernel sources appear under: sources reach clang as unsaved files, so an
/// embedded set parses as well as one on disk, and no stray file on disk is ever read.
inline constexpr std::string_view kRoot = "/kjit-src/";
/// The unsaved file that declares what NVRTC provides without headers.
inline constexpr std::string_view kPrelude = "/kjit-src/<kjit-prelude>";
/// The variables a parse appends to the main file, one per instantiation asked for: the Nth
/// is named kInstantiation + N.
inline constexpr std::string_view kInstantiation = "__kjit_sig_instantiation_";

/// The set name of a file under kRoot; empty for the prelude and clang's own files.
std::string set_name(const std::string& path);

/// Where `loc` is expanded, as a position in the source set (`file` empty outside it).
SourcePos source_pos(const Libclang::Api& api, CXSourceLocation loc);

/// Records the macro definitions, macro uses and `__global__` entry points among the children
/// of `parent` (namespaces and `extern "C"` blocks walked into) in `out`, each kernel once (its
/// definition where the unit has one), and the kernels the kInstantiation variables name.
void read_declarations(const Libclang::Api& api, CXTranslationUnit tu, CXCursor parent,
                       const std::vector<std::string>& instantiations, ParsedUnit& out);

} // namespace detail

} // namespace kjit::lint
