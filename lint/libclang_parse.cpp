#include "lint/detail/libclang_api.hpp"

#include "core/error.hpp"
#include "jit/compiler.hpp"

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

} // namespace

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
    detail::read_declarations(api, tu, api.clang_getTranslationUnitCursor(tu), out);
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
