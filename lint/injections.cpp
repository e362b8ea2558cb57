#include "lint/injections.hpp"

#include "core/error.hpp"
#include "jit/shape_file.hpp"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <exception>

namespace kjit::lint {

std::vector<Injection> load_injections(const std::filesystem::path& shape_file) {
    const ShapeFile shape = ShapeFile::load(shape_file);
    // ShapeFile keeps no positions; the same file, parsed again, says where each define is.
    toml::table root;
    try {
        root = toml::parse_file(shape_file.string());
    } catch (const std::exception&) {
    }
    const toml::array* tables = root["kernel"].as_array();
    std::vector<Injection> out;
    for (std::size_t i = 0; i < shape.kernels.size(); ++i) {
        const KernelSpec& spec = shape.kernels[i];
        Injection inj;
        inj.spec = spec.name;
        inj.source = spec.source;
        inj.file = shape_file.string();
        try {
            inj.defines = resolve_defines(spec, shape.shape);
        } catch (const ConfigError& e) {
            throw ConfigError(e.message, inj.file);
        }
        const toml::table* t = tables && i < tables->size() ? (*tables)[i].as_table() : nullptr;
        const toml::table* defines = t ? (*t)["defines"].as_table() : nullptr;
        if (defines)
            for (const auto& [key, _] : *defines)
                inj.where[std::string(key.str())] = {static_cast<int>(key.source().begin.line),
                                                     static_cast<int>(key.source().begin.column)};
        out.push_back(std::move(inj));
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
