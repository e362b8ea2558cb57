#include "tools/verbs.hpp"

#include "core/text_file.hpp"
#include "jit/compiler.hpp"
#include "jit/define_use.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

namespace kjit::cli {

namespace {
struct CompileArgs {
    SourceOptions sources;
    CacheOptions cache;
    std::string kernel;
    std::string arch = "sm_90";
    std::vector<std::string> defines;
    std::vector<std::string> include_dirs;
    std::vector<std::string> names;
    std::string cubin_out, ptx_out;
    bool lineinfo = false, no_fmad = false;
};

void write_file(const std::string& path, const std::string& bytes) {
    if (path == "-") {
        std::cout << bytes;
        return;
    }
    write_file_atomically(path, bytes, "the output file");
}

int run_compile(const CompileArgs& args) {
    const SourceSet& set = args.sources.load();
    CompileOptions options;
    options.arch = args.arch;
    options.toolkit_headers = true;
    options.lineinfo = args.lineinfo;
    options.fmad = !args.no_fmad;
    options.ptx = !args.ptx_out.empty();
    options.include_dirs = args.include_dirs;
    for (const auto& dir : args.sources.choice().include_dirs)
        options.include_dirs.push_back(dir.string());
    options.name_expressions = args.names;
    for (const auto& d : args.defines)
        add_define(options.defines, d);
    require_defines_read(set, set.kernel(args.kernel), options.defines, "-D");
    CompileCache cache(args.cache.settings());
    const Specialized s = cache.get(set, {args.kernel, options});
    if (s.error)
        std::rethrow_exception(s.error);
    const CompiledKernel& c = *s.compiled;
    // The report goes to stdout unless the CUBIN or the PTX does.
    FILE* report = args.cubin_out == "-" || args.ptx_out == "-" ? stderr : stdout;
    std::fprintf(report,
                 "%s: %s for %s in %.1f ms, cubin %zu bytes, kernel file hash %s\n  defines: %s\n  "
                 "key: %s\n",
                 c.path.c_str(),
                 s.origin == Origin::disk     ? "cached, compiled"
                 : s.origin == Origin::remote ? "from the remote cache, compiled"
                                              : "compiled",
                 c.options.arch.c_str(), c.compile_ms, c.cubin.size(), c.source_hash.hex().c_str(),
                 options.defines_text().c_str(), s.key.hex().c_str());
    for (const auto& [expression, lowered] : c.lowered_names)
        std::fprintf(report, "  name: %s -> %s\n", expression.c_str(), lowered.c_str());
    if (!c.log.empty())
        std::cerr << c.log << '\n';
    std::fflush(report);
    if (!args.cubin_out.empty())
        write_file(args.cubin_out, c.cubin);
    if (!args.ptx_out.empty())
        write_file(args.ptx_out, c.ptx);
    return kOk;
}
} // namespace

Action add_compile(CLI::App& app) {
    auto args = std::make_shared<CompileArgs>();
    auto* sub = app.add_subcommand("compile", "compile one kernel and report it (no GPU needed)");
    args->sources.add_to(*sub);
    args->cache.add_to(*sub);
    sub->add_option("kernel", args->kernel, "kernel name, e.g. rms_norm")->required();
    sub->add_option("--arch", args->arch, "target architecture")
        ->capture_default_str()
        ->check(arch_check());
    sub->add_option("-D,--define", args->defines, "NAME=VALUE injected as a define");
    sub->add_option("-I,--include-dir", args->include_dirs,
                    "extra include directory, before the project file's include_dirs (the cache "
                    "key covers the content of its files)");
    sub->add_option("--name", args->names,
                    "a template instantiation to compile, as an NVRTC name expression "
                    "('scale<128, float>'); its lowered name is printed");
    sub->add_option("-o,--cubin", args->cubin_out, "write the CUBIN to this file ('-' = stdout)");
    sub->add_option("--ptx", args->ptx_out, "write the PTX to this file ('-' = stdout)");
    sub->add_flag("--lineinfo", args->lineinfo, "generate line information");
    sub->add_flag("--no-fmad", args->no_fmad, "do not contract a*b+c into FMA");
    return [args] { return run_compile(*args); };
}

} // namespace kjit::cli
