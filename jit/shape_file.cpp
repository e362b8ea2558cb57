#include "jit/shape_file.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "core/toml.hpp"
#include "jit/compile_options.hpp"
#include "jit/project.hpp"
#include "jit/source_lines.hpp"

#include <algorithm>
#include <cctype>
#include <set>

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
    t.only_keys({"name", "source", "defines", "fallback", "instantiations", "tuned"},
                "[[kernel]]");
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
    if (const auto n = t.get("instantiations")) {
        spec.instantiations = n->strings("instantiations");
        spec.instantiations_where = t.key_where("instantiations");
    }
    if (const auto n = t.get("tuned")) {
        spec.tuned_where = n->where();
        for (const TomlEntry& e : n->table("tuned").entries()) {
            if (e.key == "dtype") {
                spec.tuned_dtype = e.value.string("dtype");
                continue;
            }
            if (e.key == "contract") {
                spec.tuned_contract = e.value.string("contract");
                continue;
            }
            if (const auto i = e.value.as_integer())
                spec.tuned_shape[e.key] = std::to_string(*i);
            else if (const auto v = e.value.as_string())
                spec.tuned_shape[e.key] = *v;
            else
                e.value.fail("a tuned shape value is an integer or a string such as \"${rows}\"");
        }
        if (spec.tuned_shape.empty())
            n->fail("'tuned' names no shape key: { rows = \"${tokens}\", n = \"${d_model}\" }");
    }
    if (spec.name.empty())
        t.fail("[[kernel]] needs 'name'");
    if (spec.source.empty())
        spec.source = spec.name;
    return spec;
}

/// A tuned kernel's lookup against what its table holds, fail closed: where the table has
/// entries of the kernel's contract, `tuned` must name the shape keys of one of them (a
/// misspelt or missing key never matches), and a dtype where they have several. A contract the
/// table holds nothing of yet runs its defaults, and start-up says so (a contract tuned after
/// another of the same source).
void check_tuned_keys(const KernelSpec& k, const TunedTable& table) {
    const std::string& source = k.source.empty() ? k.name : k.source;
    const std::string contract = k.tuned_contract.empty() ? source : k.tuned_contract;
    std::set<std::string> named;
    for (const auto& [key, _] : k.tuned_shape)
        named.insert(key);
    std::set<std::set<std::string>> keyed; // each key set the contract's entries have
    std::map<std::string, std::set<std::string>> dtypes; // by arch
    for (const TunedEntry& e : table.entries)
        if (e.kernel == source && e.contract_name() == contract) {
            std::set<std::string> keys;
            for (const auto& [key, _] : e.shape)
                keys.insert(key);
            // Only entries the lookup can return (of the named keys) make it ambiguous; an
            // entry without a dtype (written by hand) is of none.
            if (keys == named && !e.dtype.empty())
                dtypes[e.arch].insert(e.dtype);
            keyed.insert(std::move(keys));
        }
    // Without a dtype the lookup takes an entry of any: which one, the file's order decides.
    for (const auto& [arch, of] : dtypes)
        if (k.tuned_dtype.empty() && of.size() > 1)
            throw ConfigError("kernel '" + k.name + "': tuned names no dtype, and the entries of " +
                                  contract + " in " + display_path(table.file) + " are of " +
                                  join(of) + " (" + arch +
                                  "): the lookup would take whichever comes first; add dtype = \"" +
                                  *of.begin() + "\" (or another) to tuned",
                              k.tuned_where);
    if (keyed.empty() || keyed.contains(named))
        return;
    std::vector<std::string> sets;
    for (const auto& keys : keyed)
        sets.push_back(join(keys));
    throw ConfigError("kernel '" + k.name + "': tuned names shape key(s) " + join(named) +
                          ", and the entries of " + contract + " in " + display_path(table.file) +
                          " are keyed " + join(sets, "; "),
                      k.tuned_where);
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
    root.only_keys({"shape", "kernel", "tuned"}, "the shape file");
    ShapeFile out;
    if (const auto n = root.get("shape"))
        out.shape = read_shape(*n);
    if (const auto n = root.get("tuned")) {
        const std::filesystem::path table =
            (path.parent_path() / n->string("tuned")).lexically_normal();
        std::error_code ec;
        if (!std::filesystem::is_regular_file(table, ec))
            n->fail("the tuned table " + table.lexically_normal().string() + " does not exist");
        out.tuned = std::make_shared<const TunedTable>(TunedTable::load(table));
    }
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
        for (KernelSpec& k : out.kernels) {
            if (!k.tuned_shape.empty() && !out.tuned)
                throw ConfigError("kernel '" + k.name + "' is tuned, and the shape file names "
                                  "no tuned table: add tuned = \"TABLE.toml\" at its top",
                                  k.tuned_where);
            k.tuned = out.tuned;
            if (!k.tuned_shape.empty())
                check_tuned_keys(k, *out.tuned);
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

namespace {
/// `value` with every `${name}` replaced by the shape's value; `fail(problem)` on a mistake.
template <class Fail>
std::string substitute(const std::string& value, const ModelShape& shape, const Fail& fail) {
    std::string v;
    for (std::size_t i = 0; i < value.size();) {
        if (value.compare(i, 2, "${") == 0) {
            const std::size_t end = value.find('}', i);
            if (end == std::string::npos)
                fail("has an unclosed '${'");
            const std::string ref = value.substr(i + 2, end - i - 2);
            const auto it = shape.values.find(ref);
            if (it == shape.values.end()) {
                std::vector<std::string> names;
                for (const auto& [entry, _] : shape.values)
                    names.push_back(entry);
                std::vector<std::string> near = nearest(ref, names);
                for (auto& n : near)
                    n = "'" + n + "'";
                fail("names shape entry '" + ref + "', which the shape lacks" + did_you_mean(near));
            }
            v += std::to_string(it->second);
            i = end + 1;
        } else {
            v += value[i++];
        }
    }
    return v;
}
} // namespace

std::map<std::string, std::string> resolve_defines(const KernelSpec& spec,
                                                   const ModelShape& shape) {
    std::map<std::string, std::string> out;
    for (const auto& [define, value] : spec.defines) {
        const std::string& name = define; // clang 14: no lambda capture of a structured binding
        const auto fail = [&](const std::string& problem) { define_error(spec, name, problem); };
        if (const std::string problem = define_value_problem(name, value); !problem.empty())
            fail("is refused: " + problem);
        out[name] = substitute(value, shape, fail);
    }
    return out;
}

std::map<std::string, std::int64_t> resolve_tuned_shape(const KernelSpec& spec,
                                                        const ModelShape& shape) {
    std::map<std::string, std::int64_t> out;
    for (const auto& [shape_key, value] : spec.tuned_shape) {
        const std::string& key = shape_key;
        const auto fail = [&](const std::string& problem) {
            throw ConfigError("kernel '" + spec.name + "': tuned shape key " + key + " " + problem,
                              spec.tuned_where);
        };
        const std::string v = substitute(value, shape, fail);
        try {
            std::size_t used = 0;
            out[key] = std::stoll(v, &used);
            if (used != v.size())
                fail("is '" + v + "', not an integer");
        } catch (const std::logic_error&) {
            fail("is '" + v + "', not an integer");
        }
    }
    return out;
}

} // namespace kjit
