#include "tools/verbs.hpp"

#include "core/flags.hpp"
#include "core/names.hpp"
#include "jit/compile_options.hpp"
#include "jit/shape_check.hpp"
#include "kernels/contract_toml.hpp"
#include "kernels/registry.hpp"
#include "kernels/shape.hpp"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>

namespace kjit::cli {

void SourceOptions::add_to(CLI::App& app) {
    app.add_option("--src", dir,
                   "read kernels from this directory (before KJIT_KERNEL_DIR, the project file "
                   "and the copies embedded at build time)");
    add_project_to(app);
}

void SourceOptions::add_project_to(CLI::App& app) {
    app.add_option("--project", project,
                   "project file to read instead of the kjit.toml found from the current "
                   "directory");
}

const Project* SourceOptions::project_file() const {
    if (!project_)
        project_ = Project::discover(project);
    return *project_ ? &**project_ : nullptr;
}

const std::vector<std::string>& SourceOptions::register_contracts() const {
    if (!contracts_) {
        contracts_.emplace();
        if (const Project* p = project_file())
            *contracts_ = register_project_contracts(*p);
        // Over the project's own kernels, each contract's source must be one of them: else
        // every verb that plans a case fails far from the contract's `source` line.
        if (!contracts_->empty() && choice().origin == SourceOrigin::project) {
            const SourceSet& set = load();
            std::vector<std::string> kernels;
            for (const SourceFile* k : set.kernels())
                kernels.push_back(k->kernel_name());
            for (const std::string& name : *contracts_) {
                const KernelContract& c = kernel_contract(name);
                if (set.find(c.source_name() + ".cu"))
                    continue;
                const auto at = c.where.find("source");
                throw ConfigError("contract '" + name + "' names source '" + c.source_name() +
                                      "', which is no kernel of the sources (" + choice().text +
                                      ")" + did_you_mean(nearest(c.source_name(), kernels)) +
                                      " (known: " + join(kernels) + ")",
                                  at == c.where.end() ? SourceLocation{} : at->second);
            }
        }
    }
    return *contracts_;
}

std::vector<lint::Injection> SourceOptions::contract_injections() const {
    std::vector<lint::Injection> out;
    for (const std::string& name : register_contracts()) {
        const KernelContract& c = kernel_contract(name);
        const auto at = c.where.find("source");
        const std::string file = at == c.where.end() ? "" : at->second.path;
        auto add = [&](const std::string& what, const Defines& defines) {
            out.push_back({c.name + " (" + what + ")", c.source_name(), file, defines, {}, true});
            if (!c.reference_defines.empty())
                out.push_back({c.name + " (" + what + ", reference)",
                               c.source_name(),
                               file,
                               with_reference_defines(c, defines),
                               {},
                               true});
        };
        add("contract", c.defines);
        for (std::size_t k = 0; k < c.check_shapes.size(); ++k)
            add("[[check]] " + std::to_string(k + 1),
                merge_defines(c.defines, c.check_shapes[k].defines));
    }
    return out;
}

const SourceSet& SourceOptions::load() const {
    if (!set_)
        set_.emplace(choice().load());
    return *set_;
}

const KernelContract& SourceOptions::contract(std::string_view kernel) const {
    (void)register_contracts();
    if (const KernelContract* c = find_contract(kernel))
        return *c;
    const SourceSet& set = load();
    std::vector<std::string> names;
    for (const KernelContract* c : kernel_contracts())
        if (set.find(c->source_name() + ".cu"))
            names.push_back(c->name);
    const std::string near = did_you_mean(nearest(kernel, names));
    throw NotFoundError("no bench or digest case for kernel '" + std::string(kernel) +
                        "' (known: " + (names.empty() ? "none" : join(names)) + ")" +
                        (near.empty() ? ": a kernel is benched and digested through its "
                                        "contract, which a contract file the project names "
                                        "declares (docs/contracts.md)"
                                      : near));
}

CLI::Validator arch_check() {
    return CLI::Validator([](const std::string& arch) { return arch_problem(arch); }, "ARCH",
                          "arch");
}

CLI::Validator seed_check() {
    return CLI::Validator(
        [](const std::string& s) {
            std::uint64_t v = 0;
            const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            const bool whole = !s.empty() && ec == std::errc() && end == s.data() + s.size();
            return whole ? std::string()
                         : "expected a whole number from 0 to 2^64 - 1, got '" + s + "'";
        },
        "UINT", "seed");
}

std::vector<std::filesystem::path>
SourceOptions::include_dirs(const std::vector<std::string>& flags) const {
    std::vector<std::filesystem::path> dirs(flags.begin(), flags.end());
    if (const Project* p = project_file())
        for (const ProjectPath& dir : p->include_dirs)
            dirs.push_back(dir.path);
    return dirs;
}

const SourceChoice& SourceOptions::resolved() const {
    if (!choice_) {
        choice_ = choose_sources(dir, builtin_flags().resolve(), project_file());
        // A verb names the project's kernel files as it names the project's other files:
        // relative to the working directory when below it (kernel_src/rms_norm.cu).
        if (choice_->origin == SourceOrigin::project)
            choice_->dir = display_path(choice_->dir);
    }
    return *choice_;
}

const SourceChoice& SourceOptions::choice() const {
    if (!printed_ && !quiet)
        std::fprintf(stderr, "sources: %s\n", resolved().text.c_str());
    printed_ = true;
    return resolved();
}

const SourceChoice& SourceOptions::on_disk(std::string_view verb) const {
    require_sources_on_disk(resolved(), verb);
    return choice();
}

std::string SourceOptions::describe() const {
    return choice().on_disk() ? "from " + choice().dir.string() : "embedded at build time";
}

void ShapeOptions::add_to(CLI::App& app) {
    app.add_option("--shape-file", files,
                   "shape files whose production define sets apply (default: the project "
                   "file's shape_files, else every shape file beside the sources)");
}

std::vector<std::filesystem::path> ShapeOptions::choose(const SourceOptions& sources) const {
    return choose_shape_files(files, sources.project_file(), sources.choice());
}

std::vector<lint::SourceGroup> SourceOptions::file_groups(const std::vector<std::string>& files,
                                                          bool embedded,
                                                          std::string_view verb) const {
    if (files.empty() && !embedded)
        return lint::source_groups(files, embedded, on_disk(verb).dir);
    if (!quiet) {
        std::string text;
        for (const auto& f : files)
            text += (text.empty() ? "" : " ") + f;
        std::fprintf(stderr, "sources: %s\n", embedded ? "embedded" : text.c_str());
    }
    return lint::source_groups(files, embedded, {});
}

void CacheOptions::add_to(CLI::App& app) {
    app.add_flag("--no-cache", no_cache, "bypass the compile cache: compile everything");
    app.add_option("-j,--jobs", jobs, "parallel compiles (default: KJIT_COMPILE_JOBS or cores)")
        ->check(CLI::Range(1, 1024));
}

CacheSettings CacheOptions::settings() const {
    const ResolvedFlags flags = builtin_flags().resolve();
    CacheSettings s;
    s.use_disk = !no_cache && !flags.get_bool(kFlagNoCache);
    s.jobs = jobs > 0 ? jobs : static_cast<int>(flags.get_int(kFlagCompileJobs));
    // KJIT_COMPILE_WORKER as an engine reads it, else this kjit, a compile-worker itself.
    s.worker = flags.get_string(kFlagCompileWorker);
    std::error_code ec;
    if (s.worker.empty())
        s.worker = std::filesystem::read_symlink("/proc/self/exe", ec);
    return s;
}

CompileProgress progress_line(const std::string& what) {
    if (!::isatty(STDERR_FILENO))
        return {};
    return [what](std::size_t done, std::size_t total, const std::string& kernel) {
        std::fprintf(stderr, "\r\033[K%s [%zu/%zu] %s", what.c_str(), done, total, kernel.c_str());
        if (done == total)
            std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    };
}

std::function<void(std::size_t, std::size_t)> measure_progress() {
    if (!::isatty(STDERR_FILENO))
        return {};
    const auto start = std::chrono::steady_clock::now();
    return [start](std::size_t done, std::size_t total) {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double left = done ? s / static_cast<double>(done) * static_cast<double>(total - done) : 0;
        std::fprintf(stderr, "\r\033[Kmeasuring [%zu/%zu], about %.0f s left", done, total, left);
        if (done == total)
            std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    };
}

} // namespace kjit::cli
