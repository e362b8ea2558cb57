#include "jit/shape_file.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "core/toml.hpp"
#include "jit/compile_options.hpp"

#include <algorithm>

namespace kjit {

namespace {

ModelShape read_shape(const TomlNode& node) {
    const auto table = node.as_table();
    if (!table)
        node.fail("'shape' must be a table of integers");
    ModelShape shape;
    for (const TomlEntry& e : table->entries()) {
        const auto i = e.value.as_integer();
        if (!i)
            e.value.fail("shape entry '" + e.key + "' must be an integer");
        shape.values[e.key] = *i;
    }
    return shape;
}

void read_defines(const TomlNode& node, KernelSpec& spec) {
    for (const TomlEntry& d : node.table("defines").entries()) {
        std::map<std::string, std::string> probe;
        try {
            add_define(probe, d.key + "=" + d.value.define_value());
        } catch (const ConfigError& e) {
            if (!e.file.empty())
                throw;
            d.value.fail(e.message);
        }
        spec.defines.insert(probe.begin(), probe.end());
        spec.define_sources[d.key] = {d.key_where, d.value.where()};
    }
}

/// One `[[kernel]]`; `fallback_at` gets where its fallback is named.
KernelSpec read_kernel(const TomlTable& t, SourceLocation& fallback_at) {
    t.only_keys({"name", "source", "defines", "fallback", "instantiations"}, "[[kernel]]");
    KernelSpec spec;
    spec.where = t.where();
    if (const auto n = t.get("name")) {
        spec.name = n->string("name");
        spec.source_where = n->where();
    }
    if (const auto n = t.get("source")) {
        spec.source = n->string("source");
        spec.source_where = n->where();
    }
    if (const auto n = t.get("fallback")) {
        spec.fallback = n->string("fallback");
        fallback_at = n->where();
    }
    if (const auto n = t.get("defines"))
        read_defines(*n, spec);
    if (const auto n = t.get("instantiations"))
        spec.instantiations = n->strings("instantiations");
    if (spec.name.empty())
        t.fail("[[kernel]] needs 'name'");
    if (spec.source.empty())
        spec.source = spec.name;
    return spec;
}

/// A problem with define `name` of `spec`, at the define's value when the spec has positions.
[[noreturn]] void define_error(const KernelSpec& spec, const std::string& name,
                               const std::string& problem) {
    const auto at = spec.define_sources.find(name);
    throw ConfigError("kernel '" + spec.name + "': define " + name + " " + problem,
                      at == spec.define_sources.end() ? SourceLocation{} : at->second.value);
}

} // namespace

ShapeFile ShapeFile::load(const std::filesystem::path& path) {
    const TomlDocument doc = TomlDocument::load(path, "shape file");
    const TomlTable root = doc.root();
    root.only_keys({"shape", "kernel"}, "the shape file");
    ShapeFile out;
    if (const auto n = root.get("shape"))
        out.shape = read_shape(*n);
    if (const auto n = root.get("kernel")) {
        std::vector<SourceLocation> fallback_at;
        std::map<std::string, SourceLocation> first; // where each name is declared first
        for (const TomlTable& t : n->tables("kernel")) {
            fallback_at.emplace_back();
            out.kernels.push_back(read_kernel(t, fallback_at.back()));
            const KernelSpec& k = out.kernels.back();
            const SourceLocation at = t.get("name")->where();
            if (const auto [it, fresh] = first.emplace(k.name, at); !fresh)
                throw ConfigError("kernel '" + k.name + "' is declared twice (first at line " +
                                      std::to_string(it->second.line) +
                                      "): an application asks for a kernel by its name",
                                  at);
        }
        for (std::size_t i = 0; i < out.kernels.size(); ++i) {
            const KernelSpec& k = out.kernels[i];
            if (!k.fallback.empty() &&
                std::none_of(out.kernels.begin(), out.kernels.end(),
                             [&](const KernelSpec& o) { return o.name == k.fallback; }))
                throw ConfigError("kernel '" + k.name + "' names fallback '" + k.fallback +
                                      "', which is not a [[kernel]] of this file",
                                  fallback_at[i]);
        }
    }
    if (out.kernels.empty())
        throw ConfigError("the shape file declares no [[kernel]]: there is nothing to prepare",
                          path.string(), 1, 1);
    return out;
}

std::map<std::string, std::string> resolve_defines(const KernelSpec& spec,
                                                   const ModelShape& shape) {
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : spec.defines) {
        std::string v;
        for (std::size_t i = 0; i < value.size();) {
            if (value.compare(i, 2, "${") == 0) {
                const std::size_t end = value.find('}', i);
                if (end == std::string::npos)
                    define_error(spec, name, "has an unclosed '${'");
                const std::string ref = value.substr(i + 2, end - i - 2);
                const auto it = shape.values.find(ref);
                if (it == shape.values.end()) {
                    std::vector<std::string> names;
                    for (const auto& [entry, _] : shape.values)
                        names.push_back(entry);
                    std::vector<std::string> near = nearest(ref, names);
                    for (auto& n : near)
                        n = "'" + n + "'";
                    define_error(spec, name,
                                 "names shape entry '" + ref + "', which the shape lacks" +
                                     did_you_mean(near));
                }
                v += std::to_string(it->second);
                i = end + 1;
            } else {
                v += value[i++];
            }
        }
        out[name] = v;
    }
    return out;
}

} // namespace kjit
