#include "tools/verbs.hpp"

#include "jit/include_resolver.hpp"
#include "lint/lint.hpp"
#include "lint/report.hpp"
#include "lint/rules.hpp"
#include "lint/sources.hpp"

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <memory>

namespace kjit::cli {

namespace {
struct LintArgs {
    SourceOptions sources;
    std::vector<std::string> files;
    std::vector<std::string> shapes;
    std::vector<std::string> include_dirs;
    std::vector<std::string> archs;
    std::string libclang;
    bool embedded = false;
    bool json = false;
    bool rules = false;
};

int print_rules() {
    for (const auto& r : lint::rules())
        std::printf("%s  %-7s  %-5s  %s\n", std::string(r.id).c_str(),
                    std::string(severity_name(r.severity)).c_str(),
                    r.needs_clang ? "clang" : "text", std::string(r.doc).c_str());
    return kOk;
}

int run_lint(LintArgs& args) {
    if (args.rules)
        return print_rules();
    // FILES or --embedded name the sources; otherwise --src, KJIT_KERNEL_DIR or the project.
    args.sources.quiet = args.json;
    auto groups = args.sources.file_groups(args.files, args.embedded, "kjit lint");
    const Project* project = args.sources.project_file();
    lint::LintRun run;
    run.shape_files.assign(args.shapes.begin(), args.shapes.end());
    // FILES of the project's kernel tree (subdirectories included) are linted as the project's
    // kernels: one group over the whole tree, named as the project names them (ops/a.cu),
    // with its shape files. Other FILES take the shape files beside them.
    if (project && project->kernels && !args.files.empty() && !args.embedded &&
        run.shape_files.empty()) {
        std::error_code ec;
        const std::filesystem::path root =
            std::filesystem::weakly_canonical(project->kernels->path, ec);
        const std::string tree = display_path(project->kernels->path);
        SourceSet set = SourceSet::from_directory(project->kernels->path, tree);
        std::vector<std::string> targets;
        bool inside = !ec;
        for (const std::string& f : args.files) {
            const std::filesystem::path rel =
                std::filesystem::weakly_canonical(f, ec).lexically_relative(root);
            if (ec || rel.empty() || *rel.begin() == "..") {
                inside = false;
                break;
            }
            const std::string name = rel.generic_string();
            for (const SourceFile& file : set.files())
                if (name == "." || file.name == name || file.name.starts_with(name + "/"))
                    targets.push_back(file.name);
        }
        if (inside && !targets.empty()) {
            std::sort(targets.begin(), targets.end());
            targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
            groups = {{std::move(set), std::move(targets), project->kernels->path}};
        }
    }
    const bool project_kernels =
        project && (args.files.empty() || (project->kernels && groups.size() == 1 &&
                                           groups.front().dir == project->kernels->path));
    if (run.shape_files.empty() && project_kernels)
        for (const ProjectPath& p : project->shape_files)
            run.shape_files.emplace_back(display_path(p.path));
    if (project_kernels)
        run.contract_injections = args.sources.contract_injections();
    run.include_dirs = args.sources.include_dirs(args.include_dirs);
    run.archs = args.archs;
    if (run.archs.empty() && project)
        run.archs = project->archs;
    run.libclang = args.libclang;
    const lint::LintReport all = lint::lint_groups(groups, run);
    const std::string notes = lint::format_notes(all.notes);
    const std::string text = lint::format_report(all, args.json);
    std::fwrite(notes.data(), 1, notes.size(), stderr);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return all.findings.empty() ? kOk : kFindings;
}
} // namespace

Action add_lint(CLI::App& app) {
    auto args = std::make_shared<LintArgs>();
    auto* sub = app.add_subcommand(
        "lint", "find kernel source errors NVRTC reports far from their cause, or not at all");
    sub->add_option("files", args->files,
                    "kernel sources or directories (default: --src, KJIT_KERNEL_DIR or the "
                    "project file's kernels)");
    args->sources.add_to(*sub);
    sub->add_flag("--embedded", args->embedded, "lint the copies embedded in this binary");
    sub->add_option("--shape,--shape-file", args->shapes,
                    "shape files whose injected defines are checked (default: the project "
                    "file's shape_files where its kernels are linted, else every shape file "
                    "beside the sources)");
    // Each of these takes one value per use, so FILES may follow.
    sub->add_option("-I,--include-dir", args->include_dirs,
                    "an extra include directory, searched after the kernel sources, before the "
                    "project file's include_dirs and the CUDA toolkit's (as `kjit compile -I`)");
    sub->add_option("--arch", args->archs,
                    "a target architecture whose __CUDA_ARCH__ conditions are evaluated with "
                    "(default: the project file's archs, else sm_90; repeat for several)")
        ->check(arch_check());
    sub->add_flag("--json", args->json, "print the findings as a JSON array");
    sub->add_flag("--rules", args->rules, "list the rules and exit");
    sub->add_option("--libclang", args->libclang, "the libclang library to open (default: search)");
    return [args] { return run_lint(*args); };
}

} // namespace kjit::cli
