#include "lint/detail/libclang_api.hpp"

#include "core/error.hpp"
#include "jit/compiler.hpp"
#include "lint/preprocess.hpp"

#include <algorithm>

namespace kjit::lint {

using detail::kPrelude;
using detail::kRoot;

namespace {

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
    // CUDA 13 adds the 4-vectors of 8-byte elements aligned to 16 and to 32 bytes.
    for (const auto* b : {"long", "ulong", "longlong", "ulonglong", "double"})
        for (const int align : {16, 32}) {
            const auto& base = *std::find_if(std::begin(bases), std::end(bases),
                                             [&](const Base& x) { return x.name == std::string(b); });
            out += "struct __attribute__((aligned(" + std::to_string(align) + "))) " + b + "4_" +
                   std::to_string(align) + "a { " + base.type + " x, y, z, w; };\n";
        }
    return out + "struct dim3 { unsigned int x, y, z; };\n";
}

// The macros NVRTC defines that clang does not define itself the same way (clang defines
// __cplusplus, __STDC__ and __LP64__; __CUDA_ARCH__ is given on the command line).
std::string nvrtc_defines() {
    std::string out;
    for (const auto& [name, m] : nvrtc_macros("sm_90", nvrtc_version())) {
        if (m.opaque || m.function_like || name == "__cplusplus" || name == "__STDC__" ||
            name == "__LP64__" || name == "__CUDA_ARCH__")
            continue;
        out += "#define " + name;
        for (const auto& t : m.body)
            out += " " + t;
        out += "\n";
    }
    return out;
}

// What NVRTC provides without headers, for a parser that knows CUDA but not NVRTC: its
// predefined macros, the CUDA keywords, and the types it declares (NVRTC 13 compiles size_t,
// ptrdiff_t, the vector types, dim3, cudaTextureObject_t and cudaSurfaceObject_t, cudaStream_t
// and cudaError_t with no header; intN_t, half, __nv_bfloat16 and CUtensorMap need one).
std::string prelude() {
    return nvrtc_defines() + vector_types() +
           "typedef __SIZE_TYPE__ size_t;\n"
           "typedef __PTRDIFF_TYPE__ ptrdiff_t;\n"
           "typedef unsigned long long cudaTextureObject_t;\n"
           "typedef unsigned long long cudaSurfaceObject_t;\n"
           "typedef struct CUstream_st* cudaStream_t;\n"
           "typedef struct CUevent_st* cudaEvent_t;\n"
           "typedef enum cudaError { cudaSuccess = 0 } cudaError_t;\n"
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
           "#define __align__(n) __attribute__((aligned(n)))\n";
}

} // namespace

ParsedUnit Libclang::parse(const SourceSet& sources, const SourceFile& file,
                           const ParseOptions& options) const {
    const Api& api = *api_;
    static const std::string prelude_text = prelude();
    std::vector<std::string> names;
    names.reserve(sources.files().size() + 1);
    std::vector<CXUnsavedFile> unsaved;
    for (const auto& f : sources.files())
        names.push_back(std::string(kRoot) + f.name);
    names.emplace_back(kPrelude);
    // Each instantiation asked for is a variable after the main file's last line, so every
    // position in the file stays as it is.
    std::string main_text;
    if (!options.instantiations.empty()) {
        main_text = file.text + "\n";
        for (std::size_t i = 0; i < options.instantiations.size(); ++i)
            main_text += "auto* " + std::string(detail::kInstantiation) + std::to_string(i) +
                         " = &" + options.instantiations[i] + ";\n";
    }
    for (std::size_t i = 0; i < sources.files().size(); ++i) {
        const SourceFile& f = sources.files()[i];
        const std::string& text = &f == &file && !main_text.empty() ? main_text : f.text;
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
                                  "-ferror-limit=0",
                                  // NVRTC is neither clang nor gcc: headers that ask (CCCL's
                                  // compiler detection) take their NVRTC path, as they do there.
                                  "-U__clang__",
                                  "-U__GNUC__",
                                  "-U__GNUC_MINOR__",
                                  "-U__GNUC_PATCHLEVEL__",
                                  "-U__CUDA_ARCH__",
                                  "-D__CUDA_ARCH__=900",
                                  "-I" + std::string(kRoot),
                                  "-include",
                                  std::string(kPrelude),
                                  "-include",
                                  "__clang_cuda_builtin_vars.h"};
    for (const auto& dir : options.include_dirs)
        args.push_back("-I" + dir);
    for (const auto& [name, value] : options.defines)
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
    for (unsigned i = 0, n = api.clang_getNumDiagnostics(tu); i < n; ++i) {
        CXDiagnostic d = api.clang_getDiagnostic(tu, i);
        const CXDiagnosticSeverity sev = api.clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error)
            out.errors.push_back(api.str(api.clang_formatDiagnostic(d, 0)));
        // A kernel's own missing include leaves the record partial; the prelude's does not.
        if (sev == CXDiagnostic_Fatal &&
            !detail::source_pos(api, api.clang_getDiagnosticLocation(d)).file.empty())
            out.fatal = true;
        api.clang_disposeDiagnostic(d);
    }
    detail::read_declarations(api, tu, api.clang_getTranslationUnitCursor(tu),
                              options.instantiations, out);
    struct Inclusions {
        const Api* api;
        std::vector<std::string>* files;
    } inc{&api, &out.files};
    api.clang_getInclusions(
        tu,
        [](CXFile included, CXSourceLocation*, unsigned, CXClientData data) {
            auto* i = static_cast<Inclusions*>(data);
            const std::string name =
                detail::set_name(i->api->str(i->api->clang_getFileName(included)));
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
