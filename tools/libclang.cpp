#include "tools/libclang.hpp"

#include "core/error.hpp"
#include "jit/compiler.hpp"

#include <clang-c/Index.h>
#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <functional>

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
    X(clang_getClangVersion)

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

namespace {

// The directory the kernel sources appear under: sources reach clang as unsaved files, so an
// embedded set parses as well as one on disk, and no stray file on disk is ever read.
constexpr std::string_view kRoot = "/kjit-src/";
constexpr std::string_view kPrelude = "/kjit-src/<kjit-prelude>";

// NVRTC's built-in vector types (vector_types.h), with its alignments: `kjit sig` sizes
// parameters of these types.
std::string vector_types() {
    struct Base {
        const char* name;
        const char* type;
        int size;
    };
    const Base bases[] = {{"char", "signed char", 1},
                          {"uchar", "unsigned char", 1},
                          {"short", "short", 2},
                          {"ushort", "unsigned short", 2},
                          {"int", "int", 4},
                          {"uint", "unsigned int", 4},
                          {"long", "long", 8},
                          {"ulong", "unsigned long", 8},
                          {"longlong", "long long", 8},
                          {"ulonglong", "unsigned long long", 8},
                          {"float", "float", 4},
                          {"double", "double", 8}};
    const char* fields[] = {"x", "y", "z", "w"};
    std::string out;
    for (const auto& b : bases)
        for (int n = 1; n <= 4; ++n) {
            // 2- and 4-vectors are aligned to their size (16 at most); 1 and 3 to the element.
            const int align = n == 3 || n == 1 ? b.size : std::min(16, b.size * n);
            out += "struct __attribute__((aligned(" + std::to_string(align) + "))) " + b.name +
                   std::to_string(n) + " { ";
            for (int i = 0; i < n; ++i)
                out += std::string(b.type) + " " + fields[i] + "; ";
            out += "};\n";
        }
    return out + "struct dim3 { unsigned int x, y, z; };\n";
}

// What NVRTC provides without headers, for a parser that knows CUDA but not NVRTC.
std::string prelude() {
    const int v = nvrtc_version();
    return vector_types() +
           "#define __global__ __attribute__((global))\n"
           "#define __device__ __attribute__((device))\n"
           "#define __host__ __attribute__((host))\n"
           "#define __shared__ __attribute__((shared))\n"
           "#define __constant__ __attribute__((constant))\n"
           "#define __managed__ __attribute__((managed))\n"
           "#define __forceinline__ __inline__ __attribute__((always_inline))\n"
           "#define __noinline__ __attribute__((noinline))\n"
           "#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))\n"
           "#define __grid_constant__\n"
           "#define __align__(n) __attribute__((aligned(n)))\n"
           "#define __CUDACC__ 1\n"
           "#define __CUDACC_RTC__ 1\n"
           "#define __CUDACC_VER_MAJOR__ " +
           std::to_string(v / 1000) + "\n#define __CUDACC_VER_MINOR__ " +
           std::to_string(v % 1000 / 10) + "\n";
}

std::vector<std::string> candidates() {
    std::vector<std::string> out{"libclang.so.1",    "libclang-14.so.1", "libclang-16.so.1",
                                 "libclang-15.so.1", "libclang-17.so.1", "libclang-18.so.1"};
    std::error_code ec;
    std::vector<std::filesystem::path> dirs;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib", ec))
        if (e.path().filename().string().starts_with("llvm-"))
            dirs.push_back(e.path() / "lib");
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
        std::vector<std::string> found;
        for (const auto& f : std::filesystem::directory_iterator(d, ec)) {
            const std::string name = f.path().filename().string();
            if (name.starts_with("libclang") && !name.starts_with("libclang-cpp") &&
                name.find(".so.") != std::string::npos)
                found.push_back(f.path().string());
        }
        std::sort(found.begin(), found.end());
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

struct Walk {
    const Libclang::Api& api;
    CXTranslationUnit tu;
    ParsedUnit& out;

    // The set name of a file under kRoot; empty for the prelude and clang's own files.
    static std::string set_name(const std::string& path) {
        if (!path.starts_with(kRoot) || path == kPrelude)
            return {};
        return path.substr(kRoot.size());
    }

    SourcePos pos(CXSourceLocation loc) const {
        CXFile file = nullptr;
        unsigned line = 0, column = 0;
        api.clang_getExpansionLocation(loc, &file, &line, &column, nullptr);
        SourcePos p;
        if (file)
            p.file = set_name(api.str(api.clang_getFileName(file)));
        p.line = static_cast<int>(line);
        p.column = static_cast<int>(column);
        return p;
    }

    std::vector<std::string> tokens(CXSourceRange range) const {
        CXToken* toks = nullptr;
        unsigned n = 0;
        api.clang_tokenize(tu, range, &toks, &n);
        std::vector<std::string> out;
        out.reserve(n);
        for (unsigned i = 0; i < n; ++i)
            out.push_back(api.str(api.clang_getTokenSpelling(tu, toks[i])));
        if (toks)
            api.clang_disposeTokens(tu, toks, n);
        return out;
    }

    // The file text from `begin` to `end`: where a macro (`__global__`) starts the range, its
    // expansion in the file, so that tokenizing sees the file's own tokens.
    CXSourceRange file_range(CXSourceLocation begin, CXSourceLocation end) const {
        CXFile fb = nullptr, fe = nullptr;
        unsigned ob = 0, oe = 0;
        api.clang_getExpansionLocation(begin, &fb, nullptr, nullptr, &ob);
        api.clang_getExpansionLocation(end, &fe, nullptr, nullptr, &oe);
        if (!fb || fb != fe || oe < ob)
            return api.clang_getRange(begin, end);
        return api.clang_getRange(api.clang_getLocationForOffset(tu, fb, ob),
                                  api.clang_getLocationForOffset(tu, fb, oe));
    }

    // A callable visited over the children of `c`.
    void children(CXCursor c, const std::function<CXChildVisitResult(CXCursor)>& f) const {
        api.clang_visitChildren(
            c,
            [](CXCursor child, CXCursor, CXClientData data) {
                return (*static_cast<const std::function<CXChildVisitResult(CXCursor)>*>(data))(
                    child);
            },
            const_cast<std::function<CXChildVisitResult(CXCursor)>*>(&f));
    }

    void macro_definition(CXCursor c) {
        MacroDef m;
        m.pos = pos(api.clang_getCursorLocation(c));
        if (m.pos.file.empty())
            return;
        m.name = api.str(api.clang_getCursorSpelling(c));
        m.function_like = api.clang_Cursor_isMacroFunctionLike(c) != 0;
        auto toks = tokens(api.clang_getCursorExtent(c));
        std::size_t first = 1; // after the name
        if (m.function_like) {
            while (first < toks.size() && toks[first] != ")")
                ++first;
            ++first;
        }
        if (first < toks.size())
            m.body.assign(toks.begin() + static_cast<std::ptrdiff_t>(first), toks.end());
        out.macros.push_back(std::move(m));
    }

    // `__launch_bounds__(a, b)` is an attribute libclang does not expose: read its tokens.
    static std::vector<std::vector<std::string>> launch_bounds(const std::vector<std::string>& t) {
        std::vector<std::vector<std::string>> args;
        for (std::size_t i = 0; i + 1 < t.size(); ++i) {
            if ((t[i] != "__launch_bounds__" && t[i] != "launch_bounds") || t[i + 1] != "(")
                continue;
            int depth = 0;
            args.emplace_back();
            for (std::size_t j = i + 1; j < t.size(); ++j) {
                if (t[j] == "(" && depth++ == 0)
                    continue;
                if (t[j] == ")" && --depth == 0)
                    break;
                if (t[j] == "," && depth == 1)
                    args.emplace_back();
                else
                    args.back().push_back(t[j]);
            }
            break;
        }
        return args;
    }

    void function(CXCursor c, bool is_template) {
        bool global = false;
        EntryPoint e;
        children(c, [&](CXCursor child) {
            const CXCursorKind k = api.clang_getCursorKind(child);
            if (k == CXCursor_CUDAGlobalAttr)
                global = true;
            if (k == CXCursor_ParmDecl) {
                KernelParam p;
                p.name = api.str(api.clang_getCursorSpelling(child));
                const CXType type = api.clang_getCursorType(child);
                p.type = api.str(api.clang_getTypeSpelling(type));
                p.size = api.clang_Type_getSizeOf(type);
                p.align = api.clang_Type_getAlignOf(type);
                e.params.push_back(std::move(p));
            }
            return CXChildVisit_Continue;
        });
        if (!global)
            return;
        e.name = api.str(api.clang_getCursorSpelling(c));
        e.pos = pos(api.clang_getCursorLocation(c));
        e.is_template = is_template;
        // The attribute sits among the declaration's specifiers, before the name.
        auto toks = tokens(file_range(api.clang_getRangeStart(api.clang_getCursorExtent(c)),
                                      api.clang_getCursorLocation(c)));
        const auto name = std::find(toks.begin(), toks.end(), e.name);
        toks.erase(name, toks.end());
        e.launch_bounds = launch_bounds(toks);
        out.entries.push_back(std::move(e));
    }

    void declarations(CXCursor parent) {
        children(parent, [&](CXCursor c) {
            switch (api.clang_getCursorKind(c)) {
            case CXCursor_MacroDefinition:
                macro_definition(c);
                break;
            case CXCursor_MacroExpansion: {
                MacroUse u{api.str(api.clang_getCursorSpelling(c)),
                           pos(api.clang_getCursorLocation(c))};
                out.uses.push_back(std::move(u));
                break;
            }
            case CXCursor_FunctionDecl:
                function(c, false);
                break;
            case CXCursor_FunctionTemplate:
                function(c, true);
                break;
            case CXCursor_Namespace:
            case CXCursor_LinkageSpec:
            case CXCursor_UnexposedDecl: // extern "C" { } in clang 14
                declarations(c);
                break;
            default:
                break;
            }
            return CXChildVisit_Continue;
        });
    }
};

} // namespace

std::unique_ptr<Libclang> Libclang::open(const std::string& path, std::string* why_not) {
    const std::vector<std::string> tried = path.empty() ? candidates() : std::vector{path};
    std::string errors;
    for (const auto& name : tried) {
        void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            if (!path.empty())
                errors = ::dlerror();
            continue;
        }
        // Never dlclose'd: LLVM's static destructors must not run after the library is gone.
        auto api = std::make_unique<Api>();
        std::string missing;
#define KJIT_LOAD(fn)                                                                              \
    api->fn = reinterpret_cast<decltype(api->fn)>(::dlsym(handle, #fn));                           \
    if (!api->fn)                                                                                  \
        missing += (missing.empty() ? "" : ", ") + std::string(#fn);
        KJIT_LIBCLANG_API(KJIT_LOAD)
#undef KJIT_LOAD
        if (!missing.empty()) {
            errors = name + " lacks " + missing;
            continue;
        }
        std::unique_ptr<Libclang> lib(new Libclang);
        lib->api_ = std::move(api);
        lib->path_ = name;
        return lib;
    }
    if (why_not) {
        if (!errors.empty())
            *why_not = "cannot use libclang: " + errors;
        else
            *why_not = "no libclang found (tried libclang.so.1, libclang-14.so.1 ... 18 and "
                       "/usr/lib/llvm-*/lib; install libclang-14-dev or libclang1-16)";
    }
    return nullptr;
}

Libclang::~Libclang() = default;

std::string Libclang::version() const {
    return api_->str(api_->clang_getClangVersion());
}

ParsedUnit Libclang::parse(const SourceSet& sources, const SourceFile& file,
                           const std::map<std::string, std::string>& defines) const {
    const Api& api = *api_;
    static const std::string prelude_text = prelude();
    std::vector<std::string> names;
    names.reserve(sources.files().size() + 1);
    std::vector<CXUnsavedFile> unsaved;
    for (const auto& f : sources.files())
        names.push_back(std::string(kRoot) + f.name);
    names.emplace_back(kPrelude);
    for (std::size_t i = 0; i < sources.files().size(); ++i) {
        const auto& text = sources.files()[i].text;
        unsaved.push_back({names[i].c_str(), text.data(), static_cast<unsigned long>(text.size())});
    }
    unsaved.push_back({names.back().c_str(), prelude_text.data(),
                       static_cast<unsigned long>(prelude_text.size())});

    // clang 14 knows CUDA up to sm_86 (sm_90 gives no translation unit): parse for sm_80 and
    // say sm_90 to the source. No CUDA installation and no host headers: NVRTC has neither.
    std::vector<std::string> args{"-x",
                                  "cuda",
                                  "--cuda-device-only",
                                  "--cuda-gpu-arch=sm_80",
                                  "-nocudainc",
                                  "-nocudalib",
                                  "--cuda-path=/nonexistent",
                                  "-std=c++17",
                                  "-nostdlibinc",
                                  "-nostdinc++",
                                  "-w",
                                  "-U__CUDA_ARCH__",
                                  "-D__CUDA_ARCH__=900",
                                  "-I" + std::string(kRoot),
                                  "-include",
                                  std::string(kPrelude),
                                  "-include",
                                  "__clang_cuda_builtin_vars.h"};
    for (const auto& [name, value] : defines)
        args.push_back("-D" + name + "=" + value);
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    const std::string main_name = std::string(kRoot) + file.name;

    CXIndex index = api.clang_createIndex(0, 0);
    CXTranslationUnit tu = nullptr;
    // Function bodies are skipped: the preprocessor still runs over them (every expansion is
    // recorded) while the intrinsics NVRTC declares and clang lacks raise no errors.
    const CXErrorCode rc = api.clang_parseTranslationUnit2(
        index, main_name.c_str(), argv.data(), static_cast<int>(argv.size()), unsaved.data(),
        static_cast<unsigned>(unsaved.size()),
        CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_KeepGoing |
            CXTranslationUnit_SkipFunctionBodies,
        &tu);
    if (rc != CXError_Success || !tu) {
        api.clang_disposeIndex(index);
        throw Error(file.path + ": libclang returned no translation unit (error " +
                    std::to_string(static_cast<int>(rc)) + ")");
    }
    ParsedUnit out;
    Walk walk{api, tu, out};
    for (unsigned i = 0, n = api.clang_getNumDiagnostics(tu); i < n; ++i) {
        CXDiagnostic d = api.clang_getDiagnostic(tu, i);
        const CXDiagnosticSeverity sev = api.clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error)
            out.errors.push_back(api.str(api.clang_formatDiagnostic(d, 0)));
        // A kernel's own missing include leaves the record partial; the prelude's does not.
        if (sev == CXDiagnostic_Fatal && !walk.pos(api.clang_getDiagnosticLocation(d)).file.empty())
            out.fatal = true;
        api.clang_disposeDiagnostic(d);
    }
    walk.declarations(api.clang_getTranslationUnitCursor(tu));
    struct Inclusions {
        const Api* api;
        std::vector<std::string>* files;
    } inc{&api, &out.files};
    api.clang_getInclusions(
        tu,
        [](CXFile included, CXSourceLocation*, unsigned, CXClientData data) {
            auto* i = static_cast<Inclusions*>(data);
            const std::string name =
                Walk::set_name(i->api->str(i->api->clang_getFileName(included)));
            if (!name.empty() &&
                std::find(i->files->begin(), i->files->end(), name) == i->files->end())
                i->files->push_back(name);
        },
        &inc);
    if (std::find(out.files.begin(), out.files.end(), file.name) == out.files.end())
        out.files.insert(out.files.begin(), file.name);
    api.clang_disposeTranslationUnit(tu);
    api.clang_disposeIndex(index);
    return out;
}

} // namespace kjit::lint
