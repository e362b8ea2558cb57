#include "jit/shape_check.hpp"

#include "core/error.hpp"
#include "core/names.hpp"

namespace kjit {

void check_shape_file(const ShapeFile& shape, const SourceSet& sources) {
    // The file's own mistakes (a `${}` its shape lacks) first, then what it names in the
    // sources: a shape file is judged by itself before it is matched with a kernel tree.
    for (const KernelSpec& spec : shape.kernels)
        (void)resolve_defines(spec, shape.shape);
    std::vector<std::string> known;
    for (const SourceFile* k : sources.kernels())
        known.push_back(k->kernel_name());
    for (const KernelSpec& spec : shape.kernels) {
        const std::string& source = spec.source.empty() ? spec.name : spec.source;
        const SourceFile* file = sources.find(source.ends_with(".cu") ? source : source + ".cu");
        if (!file || !file->is_kernel()) {
            const std::string list = join(known);
            std::vector<std::string> near = nearest(source, known);
            for (auto& n : near)
                n = "'" + n + "'";
            throw ConfigError("kernel '" + spec.name + "' names source '" + source +
                                  "', which is no kernel of the sources" + did_you_mean(near) +
                                  " (known: " + (list.empty() ? "none" : list) + ")",
                              spec.source_where.path.empty() ? spec.where : spec.source_where);
        }
    }
}

ShapeFile load_checked_shape_file(const std::filesystem::path& path, const SourceSet& sources) {
    ShapeFile shape = ShapeFile::load(path);
    check_shape_file(shape, sources);
    return shape;
}

std::vector<std::filesystem::path> choose_shape_files(const std::vector<std::string>& flag_files,
                                                      const Project* project,
                                                      const SourceChoice& sources) {
    std::vector<std::filesystem::path> out;
    if (!flag_files.empty()) {
        out.assign(flag_files.begin(), flag_files.end());
        return out;
    }
    if (project && !project->shape_files.empty()) {
        for (const ProjectPath& p : project->shape_files)
            out.emplace_back(display_path(p.path));
        return out;
    }
    if (sources.on_disk())
        return shape_files_beside(sources.dir);
    return out;
}

} // namespace kjit
