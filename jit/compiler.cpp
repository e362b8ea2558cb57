#include "jit/compiler.hpp"

#include "jit/include_resolver.hpp"

#include <nvrtc.h>

#include <chrono>
#include <regex>
#include <sstream>

namespace kjit {

namespace {

void check(nvrtcResult r, const char* call, const std::string& context) {
    if (r != NVRTC_SUCCESS)
        throw NvrtcError(call, static_cast<int>(r), nvrtcGetErrorString(r), context);
}

/// Owns an nvrtcProgram. The program is named by the kernel's name in its set, not by a path
/// on disk, and every header it can include is given in memory.
class NvrtcProgram {
  public:
    NvrtcProgram(const SourceFile& file, const std::vector<const SourceFile*>& headers) {
        std::vector<const char*> texts, names;
        for (const auto* h : headers) {
            texts.push_back(h->text.c_str());
            names.push_back(h->name.c_str());
        }
        check(nvrtcCreateProgram(&prog_, file.text.c_str(), file.name.c_str(),
                                 static_cast<int>(texts.size()), texts.data(), names.data()),
              "nvrtcCreateProgram", file.path);
    }
    NvrtcProgram(const NvrtcProgram&) = delete;
    NvrtcProgram& operator=(const NvrtcProgram&) = delete;
    ~NvrtcProgram() { nvrtcDestroyProgram(&prog_); }
    [[nodiscard]] nvrtcProgram get() const { return prog_; }

    [[nodiscard]] std::string log() const {
        std::size_t n = 0;
        check(nvrtcGetProgramLogSize(prog_, &n), "nvrtcGetProgramLogSize", {});
        std::string s(n, '\0');
        check(nvrtcGetProgramLog(prog_, s.data()), "nvrtcGetProgramLog", {});
        while (!s.empty() && (s.back() == '\0' || s.back() == '\n'))
            s.pop_back();
        return s;
    }

  private:
    nvrtcProgram prog_ = nullptr;
};

} // namespace

int nvrtc_version() {
    int major = 0, minor = 0;
    check(nvrtcVersion(&major, &minor), "nvrtcVersion", {});
    return major * 1000 + minor * 10;
}

std::string rewrite_log(const std::string& log, const SourceSet& sources,
                        std::vector<Diagnostic>* diagnostics) {
    static const std::regex head(R"(^(.+)\((\d+)\): (catastrophic error|error|warning|remark)(?: #[\w-]+)?: (.*)$)");
    std::istringstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (!std::regex_match(lines[i], m, head)) {
            out += lines[i] + '\n';
            continue;
        }
        Diagnostic d;
        d.path = m[1];
        if (const SourceFile* h = sources.find(d.path))
            d.path = h->path;
        d.line = std::stoi(m[2]);
        d.severity = m[3] == "warning" ? Severity::warning
                     : m[3] == "remark" ? Severity::note
                                        : Severity::error; // "error", "catastrophic error"
        d.message = m[4];
        // NVRTC echoes the source line indented by two spaces, then a caret under the column.
        if (i + 2 < lines.size()) {
            const auto caret = lines[i + 2].find('^');
            if (caret != std::string::npos && caret >= 2 &&
                lines[i + 2].find_first_not_of(" ^") == std::string::npos)
                d.column = static_cast<int>(caret - 2) + 1;
        }
        out += d.format() + '\n';
        if (diagnostics)
            diagnostics->push_back(std::move(d));
    }
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

CompiledKernel compile(const SourceSet& sources, std::string_view kernel,
                       const CompileOptions& options) {
    const SourceFile& file = sources.kernel(kernel);
    const auto start = std::chrono::steady_clock::now();
    // The linter resolves through the same IncludeResolver: what lints clean compiles.
    const IncludeResolver resolver(
        sources, {options.include_dirs.begin(), options.include_dirs.end()},
        {options.toolkit_include_dirs.begin(), options.toolkit_include_dirs.end()});
    NvrtcProgram prog(file, resolver.headers(file));
    std::vector<std::string> args = options.argv();
    // NVRTC would add the directory of the program's name, and the current directory for a bare
    // name, to the include path: the kernel then reads only the headers it was given.
    args.insert(args.begin() + 1, "--no-source-include");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    const nvrtcResult r =
        nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
    std::vector<Diagnostic> diagnostics;
    const std::string log = rewrite_log(prog.log(), sources, &diagnostics);
    if (r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION) {
        throw CompileError(file.kernel_name(), file.path, args, options.defines,
                           log.empty() ? std::string(nvrtcGetErrorString(r)) : log,
                           std::move(diagnostics), file.hash.hex());
    }
    check(r, "nvrtcCompileProgram", file.path);

    CompiledKernel out;
    out.kernel = file.kernel_name();
    out.path = file.path;
    out.source_hash = file.hash;
    out.options = options;
    out.log = log;
    std::size_t n = 0;
    check(nvrtcGetCUBINSize(prog.get(), &n), "nvrtcGetCUBINSize", file.path);
    out.cubin.resize(n);
    check(nvrtcGetCUBIN(prog.get(), out.cubin.data()), "nvrtcGetCUBIN", file.path);
    if (options.ptx) {
        check(nvrtcGetPTXSize(prog.get(), &n), "nvrtcGetPTXSize", file.path);
        out.ptx.resize(n);
        check(nvrtcGetPTX(prog.get(), out.ptx.data()), "nvrtcGetPTX", file.path);
        if (!out.ptx.empty() && out.ptx.back() == '\0')
            out.ptx.pop_back();
    }
    out.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    return out;
}

} // namespace kjit
