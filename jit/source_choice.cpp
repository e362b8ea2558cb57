#include "jit/source_choice.hpp"

#include "core/error.hpp"

namespace kjit {

namespace {
std::string with_slash(std::string dir) {
    if (!dir.empty() && dir.back() != '/')
        dir += '/';
    return dir;
}
} // namespace

SourceSet SourceChoice::load() const {
    return on_disk() ? SourceSet::from_directory(dir) : SourceSet::embedded();
}

SourceProvider SourceChoice::provider() const {
    return SourceProvider(on_disk() ? dir : std::filesystem::path{}, include_dirs);
}

SourceChoice choose_sources(const std::string& flag_dir, const ResolvedFlags& flags,
                            const Project* project) {
    SourceChoice c;
    if (project) {
        c.project = project->file;
        for (const ProjectPath& p : project->include_dirs)
            c.include_dirs.push_back(p.path);
    }
    const std::string& env_dir = flags.get_string(kFlagKernelDir);
    if (!flag_dir.empty()) {
        c.origin = SourceOrigin::flag;
        c.dir = flag_dir;
        c.text = "--src " + with_slash(flag_dir);
    } else if (!env_dir.empty()) {
        c.origin = SourceOrigin::environment;
        c.dir = env_dir;
        c.text = std::string(kFlagKernelDir) + "=" + with_slash(env_dir);
    } else if (project && project->kernels) {
        c.origin = SourceOrigin::project;
        c.written = std::filesystem::path(project->kernels->text).lexically_normal().string();
        while (!c.written.empty() && c.written.back() == '/')
            c.written.pop_back();
        c.dir = project->kernels->path;
        c.text = display_location(project->kernels->where) + " " +
                 with_slash(project->kernels->text);
    } else {
        c.text = "embedded";
    }
    return c;
}

bool embeds_sources(const SourceSet& embedded, const SourceChoice& sources) {
    if (sources.written.empty())
        return false;
    const std::string prefix = sources.written + "/";
    for (const SourceFile& f : embedded.files())
        if (f.path.starts_with(prefix))
            return true;
    return false;
}

std::optional<std::string> audit_freshness_skip(const SourceChoice& sources,
                                                const SourceSet& embedded) {
    switch (sources.origin) {
    case SourceOrigin::embedded:
        return "the embedded copies were compiled: no kernel directory to compare them with";
    case SourceOrigin::flag:
    case SourceOrigin::environment:
        return "sources read from " + sources.dir.string() + ", not embedded";
    case SourceOrigin::project:
        break;
    }
    if (!embeds_sources(embedded, sources))
        return "this binary embeds no copy of " + sources.written + "/";
    return std::nullopt;
}

void require_sources_on_disk(const SourceChoice& sources, std::string_view verb) {
    if (sources.on_disk())
        return;
    std::error_code ec;
    const std::filesystem::path cwd = std::filesystem::current_path(ec);
    const std::string tail = ", no --src DIR and no " + std::string(kFlagKernelDir) + " (";
    if (!sources.project.empty())
        throw ConfigError(std::string(verb) + " reads kernel sources on disk and has none: " +
                          display_path(sources.project) + " names no `kernels` directory" + tail +
                          "add kernels = \"DIR\" to it, or pass --src DIR)");
    throw ConfigError(std::string(verb) + " reads kernel sources on disk and has none: no " +
                      kProjectFileName + " in " + cwd.string() + " or a directory above it" + tail +
                      "write a " + kProjectFileName +
                      " with kernels = \"DIR\", or pass --src DIR)");
}

void require_kernels(const SourceSet& set, const SourceChoice& sources) {
    if (!set.kernels().empty())
        return;
    throw ConfigError("no kernel in " + sources.text +
                      ": the directory holds no .cu file, so there is nothing to audit or check "
                      "(is it the directory that holds the kernels?)");
}

SourceChoice default_sources() {
    const std::optional<Project> project = Project::discover();
    return choose_sources({}, process_flags(), project ? &*project : nullptr);
}

} // namespace kjit
