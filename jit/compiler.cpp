#include "jit/compiler.hpp"

#include "core/names.hpp"
#include "jit/define_use.hpp"
#include "jit/source_lines.hpp"
#include "jit/toolkit.hpp"

#include <nvrtc.h>

#include <algorithm>
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

/// The name an entry point is declared by: "vadd" for mylib::vadd (_ZN5mylib4vaddE...), "scale"
/// for ts::scale<float>.
std::string declared_name(const std::string& symbol) {
    std::string name = readable_entry(symbol);
    name = name.substr(0, name.find('<'));
    const std::size_t colons = name.rfind("::");
    return colons == std::string::npos ? name : name.substr(colons + 2);
}

/// The line of the `__launch_bounds__` in the declaration of `entry` (a name as written, so
/// not a mangled one) in `text`; 0 when none is found.
int launch_bounds_line(std::string_view text, std::string_view entry) {
    const LogicalSource source(text);
    int bound = 0; // the last __launch_bounds__ since the end of a declaration or body
    for (const LogicalLine& l : source.lines())
        for (std::size_t k = 0; k < l.tokens.size(); ++k) {
            const std::string_view t = l.tokens[k].text;
            if (t == "__launch_bounds__")
                bound = l.line;
            else if (t == ";" || t == "{" || t == "}")
                bound = 0;
            else if (bound && t == entry && k + 1 < l.tokens.size() && l.tokens[k + 1].text == "(")
                return bound;
        }
    return 0;
}

} // namespace

const EntryParams* CompiledKernel::entry(std::string_view name) const {
    const auto lowered = lowered_names.find(std::string(name));
    const std::string_view exported = lowered == lowered_names.end() ? name : lowered->second;
    for (const EntryParams& e : entries)
        if (e.entry == exported)
            return &e;
    return nullptr;
}

int nvrtc_version() {
    int major = 0, minor = 0;
    check(nvrtcVersion(&major, &minor), "nvrtcVersion", {});
    return major * 1000 + minor * 10;
}

std::vector<std::string> supported_archs() {
    static const std::vector<std::string> archs = [] {
        int n = 0;
        check(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs", {});
        std::vector<int> numbers(static_cast<std::size_t>(n));
        check(nvrtcGetSupportedArchs(numbers.data()), "nvrtcGetSupportedArchs", {});
        std::vector<std::string> out;
        for (int a : numbers)
            out.push_back("sm_" + std::to_string(a));
        return out;
    }();
    return archs;
}

void check_options(const CompileOptions& options) {
    options.check();
    const std::vector<std::string> known = supported_archs();
    std::string base = options.arch;
    if (base.back() == 'a' || base.back() == 'f')
        base.pop_back();
    if (std::find(known.begin(), known.end(), base) != known.end())
        return;
    const std::string list = join(known);
    const int v = nvrtc_version();
    throw ConfigError("unknown architecture '" + options.arch + "' (NVRTC " +
                      std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10) +
                      " compiles for: " + list + ")");
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

namespace {

/// The options NVRTC compiles `file` with: options.argv() and the toolkit's include directories.
std::vector<std::string> nvrtc_args(const SourceSet& sources, const SourceFile& file,
                                    const CompileOptions& options) {
    std::vector<std::string> args = options.argv();
    if (options.toolkit_include_dirs.empty())
        for (const std::string& dir : toolkit_dirs_for(options, sources, file))
            args.push_back("-I" + dir);
    // NVRTC would add the directory of the program's name, and the current directory for a bare
    // name, to the include path: the kernel then reads only the headers it was given.
    args.insert(args.begin() + 1, "--no-source-include");
    return args;
}

nvrtcResult compile_program(const NvrtcProgram& prog, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    return nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
}

} // namespace

std::optional<NameMapError> name_map_error(const std::string& log,
                                           std::span<const std::string> expressions) {
    const std::size_t at = log.find("__nv_name_map:");
    if (at == std::string::npos)
        return std::nullopt;
    for (const std::string& e : expressions)
        if (log.find("nv_mangled_name " + e + "\n") != std::string::npos)
            return NameMapError{e, log.substr(at, log.find('\n', at) - at)};
    return std::nullopt;
}

std::string front_end_log(const SourceSet& sources, std::string_view kernel,
                          const CompileOptions& options, std::string_view appended) {
    check_options(options);
    SourceFile file = sources.kernel(kernel);
    file.text += '\n';
    file.text += appended;
    NvrtcProgram prog(file, sources.includable(sources.kernel(kernel)));
    std::vector<std::string> args = nvrtc_args(sources, file, options);
    args.emplace_back("-fdevice-syntax-only");
    const nvrtcResult r = compile_program(prog, args);
    if (r != NVRTC_ERROR_COMPILATION)
        check(r, "nvrtcCompileProgram", file.path);
    return r == NVRTC_SUCCESS ? std::string() : prog.log();
}

CompiledKernel compile(const SourceSet& sources, std::string_view kernel,
                       const CompileOptions& options) {
    check_options(options);
    const SourceFile& file = sources.kernel(kernel);
    if (file.text.find_first_not_of(" \t\r\n\f\v") == std::string::npos)
        throw ConfigError("the kernel source is empty: there is nothing to compile", file.path);
    const auto start = std::chrono::steady_clock::now();
    NvrtcProgram prog(file, sources.includable(file));
    for (const std::string& expression : options.name_expressions)
        check(nvrtcAddNameExpression(prog.get(), expression.c_str()), "nvrtcAddNameExpression",
              file.path + ": " + expression);
    const std::vector<std::string> args = nvrtc_args(sources, file, options);
    const nvrtcResult r = compile_program(prog, args);
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
    if (!options.check_only) {
        check(nvrtcGetCUBINSize(prog.get(), &n), "nvrtcGetCUBINSize", file.path);
        out.cubin.resize(n);
        check(nvrtcGetCUBIN(prog.get(), out.cubin.data()), "nvrtcGetCUBIN", file.path);
        if (out.cubin.empty()) // never handed on, cached or served: there is nothing to load
            throw Error("nvrtcGetCUBIN: NVRTC returned an empty CUBIN for " + file.path + " (" +
                        options.arch + ")");
    }
    // The PTX is there beside the CUBIN (NVRTC compiles through it): reading it costs well
    // under a millisecond, and it is the only output that tells an int from a float parameter.
    check(nvrtcGetPTXSize(prog.get(), &n), "nvrtcGetPTXSize", file.path);
    std::string ptx(n, '\0');
    check(nvrtcGetPTX(prog.get(), ptx.data()), "nvrtcGetPTX", file.path);
    if (!ptx.empty() && ptx.back() == '\0')
        ptx.pop_back();
    out.entries = parse_ptx_entries(ptx);
    // A finding about the source, as a compile error is: the same error (and exit code) whether
    // the compile ran here or in a worker.
    const auto refuse = [&](Diagnostic d) {
        std::string text = d.format();
        throw CompileError(file.kernel_name(), file.path, args, options.defines, std::move(text),
                           {std::move(d)}, file.hash.hex());
    };
    // A file of templates is instantiated by the name expressions of a launch (the Engine's
    // instantiations): compiled before they are known, as the audit does, it has no entry
    // point yet.
    if (out.entries.empty() && !options.entry_optional &&
        !(options.templates_later && options.name_expressions.empty() &&
          names_identifier(file.text, "template"))) {
        refuse({.path = file.path,
                .message = "the kernel source compiles to no entry point: no __global__ "
                           "function is left with these defines (one behind a false #if, "
                           "after a byte 0xFF, in a comment left open, or a template never "
                           "named by a name expression); there is nothing to launch",
                .rule = {}});
    }
    // A launch bound above a block's limit: built for blocks no launch can have (a define that
    // sizes the block, injected too large); refused here, at start-up, not at the first launch.
    for (const EntryParams& e : out.entries) {
        if (e.max_threads <= kMaxBlockThreads)
            continue;
        refuse({.path = file.path,
                .line = launch_bounds_line(file.text, declared_name(e.entry)),
                .message = "entry " + readable_entry(e.entry) + " declares __launch_bounds__ of " +
                           std::to_string(e.max_threads) + " threads a block, above the " +
                           std::to_string(kMaxBlockThreads) +
                           " a block can have: no launch can run it as it was built for; "
                           "the defines that size its block are too large",
                .rule = {}});
    }
    // An injected define the file #defines again under a condition that held for the injected
    // value (`#if !defined(TB) || TB < 1024`, which the define checks cannot evaluate): NVRTC
    // keeps the file's value and only warns, so the kernel is built with another value.
    static constexpr std::string_view kRedefined = "incompatible redefinition of macro \"";
    for (const Diagnostic& w : diagnostics) {
        if (w.severity != Severity::warning || !w.message.starts_with(kRedefined))
            continue;
        const std::size_t from = kRedefined.size();
        const std::string name = w.message.substr(from, w.message.find('"', from) - from);
        if (const auto v = options.defines.find(name); v != options.defines.end()) {
            Diagnostic d = w;
            d.severity = Severity::error;
            d.message = "define " + name + "=" + v->second +
                        " is #defined again here, under a condition that held for the injected "
                        "value (NVRTC: " +
                        w.message +
                        "): the file's value replaces the injected one; put the file's default "
                        "under #ifndef " +
                        name;
            refuse(std::move(d));
        }
    }
    if (options.ptx)
        out.ptx = std::move(ptx);
    for (const std::string& expression : options.name_expressions) {
        const char* lowered = nullptr;
        check(nvrtcGetLoweredName(prog.get(), expression.c_str(), &lowered),
              "nvrtcGetLoweredName", file.path + ": " + expression);
        out.lowered_names[expression] = lowered;
    }
    out.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    return out;
}

} // namespace kjit
