#include "lint/injections.hpp"

#include "core/error.hpp"
#include "jit/shape_check.hpp"
#include "jit/shape_file.hpp"

#include <algorithm>

namespace kjit::lint {

std::vector<Injection> load_injections(const std::filesystem::path& shape_file) {
    const ShapeFile shape = ShapeFile::load(shape_file);
    std::vector<Injection> out;
    for (const KernelSpec& spec : shape.kernels) {
        Injection inj;
        inj.spec = spec.name;
        inj.source = spec.source;
        inj.file = shape_file.string();
        // A `${name}` the shape lacks is an error at the define's value.
        inj.defines = resolve_defines(spec, shape.shape);
        for (const auto& [name, at] : spec.define_sources)
            inj.where[name] = at.name;
        inj.instantiations = spec.instantiations;
        inj.instantiations_where = spec.instantiations_where;
        out.push_back(std::move(inj));
    }
    return out;
}

std::vector<Injection> shape_injections(const std::vector<std::filesystem::path>& files,
                                        const SourceSet* sources) {
    std::vector<Injection> out;
    for (const auto& file : files) {
        if (sources)
            (void)load_checked_shape_file(file, *sources);
        auto injs = load_injections(file);
        out.insert(out.end(), injs.begin(), injs.end());
    }
    return out;
}

std::vector<Injection> find_injections(const std::filesystem::path& dir,
                                       std::vector<std::string>* skipped) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    // Sweep files (*.sweep.toml) hold tuning spaces, not production define sets: `kjit sweep`
    // checks that their defines are read.
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ".toml" &&
            !e.path().filename().string().ends_with(".sweep.toml"))
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<Injection> out;
    for (const auto& f : files) {
        try {
            auto injs = load_injections(f);
            out.insert(out.end(), injs.begin(), injs.end());
        } catch (const ConfigError& e) {
            if (skipped)
                skipped->push_back(f.string() + " is not a shape file (" + e.message +
                                   "): its defines are not checked");
        }
    }
    return out;
}

} // namespace kjit::lint
