#include "tools/verbs.hpp"

#include "jit/define_use.hpp"

#include "jit/compile_options.hpp"
#include "jit/include_resolver.hpp"
#include "lint/libclang.hpp"
#include "lint/signature.hpp"
#include "lint/sources.hpp"
#include "lint/verify.hpp"

#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
struct SigArgs {
    SourceOptions sources;
    std::vector<std::string> files;
    std::vector<std::string> defines;
    std::vector<std::string> include_dirs;
    std::vector<std::string> instantiations;
    std::string libclang;
    std::string arch = "sm_90";
    bool embedded = false;
    bool json = false;
    bool verify = false;
};

int run_sig(SigArgs& args) {
    // FILES or --embedded name the sources; otherwise --src, KJIT_KERNEL_DIR or the project.
    args.sources.quiet = args.json;
    const std::vector<lint::SourceGroup> groups =
        args.sources.file_groups(args.files, args.embedded, "kjit sig");
    std::string why_not;
    const auto clang = lint::Libclang::open(args.libclang, &why_not);
    if (!clang)
        throw ConfigError("kjit sig needs libclang: " + why_not);
    std::map<std::string, std::string> defines;
    for (const auto& d : args.defines)
        add_define(defines, d);
    // A -D that no listed file (nor what it includes) reads would list the defaults as if it
    // applied: refused, as kjit compile refuses it.
    std::vector<UnreadDefine> refused;
    for (const auto& [name, value] : defines) {
        std::vector<UnreadDefine> unread;
        bool read = false;
        for (const auto& g : groups) {
            std::vector<const SourceFile*> files; // the listed files, else every kernel
            for (const auto& t : g.targets)
                files.push_back(&g.sources.kernel(t));
            if (files.empty())
                files = g.sources.kernels();
            for (const SourceFile* f : files) {
                auto u = unread_defines(g.sources, *f, {{name, value}});
                read = read || u.empty();
                if (!u.empty() && unread.empty())
                    unread = std::move(u);
            }
        }
        if (!read && !unread.empty())
            refused.push_back(std::move(unread.front()));
    }
    refuse_unread_defines(refused, "-D", "the files listed or what they include");
    const std::vector<std::filesystem::path> include_dirs =
        args.sources.include_dirs(args.include_dirs);
    lint::SignatureReport all;
    std::vector<lint::VerifyReport> verified;
    for (const auto& g : groups) {
        const IncludeResolver resolver(g.sources, include_dirs);
        lint::SignatureRequest request{&g.sources, g.targets, clang.get(),
                                       {defines, resolver.search_dirs(), args.instantiations}};
        auto report = lint::signatures(request);
        if (args.verify) {
            CompileOptions options;
            options.arch = args.arch;
            options.defines = defines;
            for (const auto& dir : resolver.search_dirs())
                options.include_dirs.push_back(dir);
            verified.push_back(lint::verify(report, g.sources, options));
        }
        all.kernels.insert(all.kernels.end(), std::make_move_iterator(report.kernels.begin()),
                           std::make_move_iterator(report.kernels.end()));
        all.notes.insert(all.notes.end(), report.notes.begin(), report.notes.end());
        all.units.insert(all.units.end(), report.units.begin(), report.units.end());
    }
    std::string notes;
    for (const auto& n : all.notes)
        notes += "kjit sig: note: " + n + "\n";
    lint::VerifyReport total;
    for (const auto& v : verified) {
        total.units += v.units;
        total.failed_units += v.failed_units;
        total.empty_units += v.empty_units;
        total.checked += v.checked;
        total.agreed += v.agreed;
        total.unchecked += v.unchecked;
        total.notes.insert(total.notes.end(), v.notes.begin(), v.notes.end());
    }
    std::string text = lint::format_signatures(all, args.json);
    if (args.verify) {
        const std::string summary = lint::format_verify(total);
        // The verify notes go to stderr with the others; its summary line follows the listing
        // (on stderr with --json, so stdout stays one JSON document).
        const std::size_t last = summary.rfind("verify: ");
        notes += summary.substr(0, last);
        (args.json ? notes : text) += summary.substr(last);
    }
    std::fwrite(notes.data(), 1, notes.size(), stderr);
    std::fwrite(text.data(), 1, text.size(), stdout);
    // A unit NVRTC does not compile leaves its kernels unverified: a failure, not a pass.
    // So does a .cu that compiles to no entry point.
    const bool disagree =
        total.agreed < total.checked || total.failed_units > 0 || total.empty_units > 0;
    return all.has_errors() || disagree ? kFindings : kOk;
}
} // namespace

Action add_sig(CLI::App& app) {
    auto args = std::make_shared<SigArgs>();
    auto* sub = app.add_subcommand(
        "sig", "list each __global__ entry point: parameters (name, type, size) and launch bounds");
    sub->add_option("files", args->files,
                    "kernel sources or directories (default: --src, KJIT_KERNEL_DIR or the "
                    "project file's kernels)");
    args->sources.add_to(*sub);
    sub->add_flag("--embedded", args->embedded, "read the copies embedded in this binary");
    sub->add_option("-D,--define", args->defines, "NAME=VALUE injected as the engine would");
    sub->add_option("-I,--include-dir", args->include_dirs,
                    "an extra include directory, searched after the kernel sources, before the "
                    "project file's include_dirs and the CUDA toolkit's");
    sub->add_option("--instantiate", args->instantiations,
                    "a template kernel's instantiation to list, as a name expression "
                    "('ns::scale<float, 4>')");
    sub->add_flag("--verify", args->verify,
                  "compile each translation unit to PTX with NVRTC and check every listed "
                  "parameter's size and offset against its .entry");
    sub->add_option("--arch", args->arch, "the architecture --verify compiles for")
        ->default_str("sm_90")
        ->check(arch_check());
    sub->add_flag("--json", args->json, "print the entry points as a JSON array");
    sub->add_option("--libclang", args->libclang, "the libclang library to open (default: search)");
    return [args] { return run_sig(*args); };
}

} // namespace kjit::cli
