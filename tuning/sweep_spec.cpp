#include "tuning/sweep_spec.hpp"

#include "core/error.hpp"
#include "jit/compile_options.hpp"
#include "kernels/contract_toml.hpp"
#include "kernels/registry.hpp"
#include "kernels/shape.hpp"
#include "kernels/toml_reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kjit {

namespace {

std::pair<int, int> position(const toml::source_region& where) {
    return {static_cast<int>(where.begin.line), static_cast<int>(where.begin.column)};
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

std::vector<long long> param_values(const TomlReader& r, const toml::node& n,
                                    const std::string& name) {
    std::vector<long long> out;
    if (const auto* a = n.as_array()) {
        for (const auto& v : *a)
            out.push_back(r.integer(v, name));
    } else if (const auto* t = n.as_table()) {
        if (t->contains("pow2")) {
            r.only_keys(*t, {"pow2"}, "sweep parameter " + name);
            const auto* range = (*t)["pow2"].as_array();
            if (!range || range->size() != 2)
                r.fail(*t->get("pow2"), "'pow2' must be [min, max]");
            const long long lo = r.integer(*range->get(0), name),
                            hi = r.integer(*range->get(1), name);
            for (long long v = 1; v <= hi; v *= 2)
                if (v >= lo)
                    out.push_back(v);
        } else {
            r.only_keys(*t, {"min", "max", "step"}, "sweep parameter " + name);
            if (!t->contains("min") || !t->contains("max"))
                r.fail(n, "a range needs 'min' and 'max' (and optionally 'step')");
            const long long lo = r.integer(*t->get("min"), "min"),
                            hi = r.integer(*t->get("max"), "max");
            const long long step = t->contains("step") ? r.integer(*t->get("step"), "step") : 1;
            if (step <= 0)
                r.fail(*t->get("step"), "'step' must be positive");
            for (long long v = lo; v <= hi; v += step)
                out.push_back(v);
        }
    } else {
        r.fail(n, "sweep parameter '" + name +
                      "' must be a list, {min, max, step} or {pow2 = [min, max]}");
    }
    if (out.empty())
        r.fail(n, "sweep parameter '" + name + "' has no values");
    return out;
}

/// [shape] against a registered contract's keys; the contract's bench shape when absent.
void read_contract_shape(const TomlReader& r, const toml::table& root, SweepSpec& spec) {
    const KernelContract& c = spec.contract;
    const auto* n = root.get("shape");
    if (!n) {
        for (const auto& [k, v] : parse_shape(c, c.bench_shape))
            spec.shape[k] = v;
        return;
    }
    for (const auto& [k, v] : r.table(*n, "shape"))
        if (std::find(c.shape_keys.begin(), c.shape_keys.end(), k.str()) == c.shape_keys.end())
            r.fail(k, "'" + std::string(k.str()) + "' is not a shape key of " + c.name +
                          " (shape keys: " + joined(c.shape_keys) + ")");
    for (const auto& k : c.shape_keys)
        if (!spec.shape.contains(k))
            r.fail(*n, "[shape] needs '" + k + "' (the shape keys of " + c.name + ": " +
                           joined(c.shape_keys) + ")");
}

void read_check(const TomlReader& r, const toml::node& n, SweepSpec& spec) {
    const auto& t = r.table(n, "check");
    r.only_keys(t, {"mode", "rtol", "reference", "baseline"}, "[check]");
    const std::string mode = t.contains("mode") ? r.string(*t.get("mode"), "mode") : "digest";
    if (mode == "digest")
        spec.check = SweepSpec::Check::digest;
    else if (mode == "tolerance")
        spec.check = SweepSpec::Check::tolerance;
    else if (mode == "none")
        spec.check = SweepSpec::Check::none;
    else
        r.fail(*t.get("mode"),
               "unknown check mode '" + mode + "' (known: digest, tolerance, none)");
    if (const auto* v = t.get("rtol")) {
        if (!v->is_number())
            r.fail(*v, "'rtol' must be a number");
        spec.rtol = v->value_or(1e-5);
    }
    if (const auto* v = t.get("reference")) {
        spec.reference = r.string(*v, "reference");
        if (!find_reference(spec.reference))
            r.fail(*v, "no float64 reference is registered as '" + spec.reference +
                           "' (known: " + joined(reference_names()) + ")");
    }
    if (spec.check == SweepSpec::Check::tolerance && spec.reference.empty())
        r.fail(n, spec.inline_contract
                      ? "tolerance mode needs 'reference' (a float64 reference: " +
                            joined(reference_names()) + ")"
                      : "tolerance mode needs a float64 reference: the contract of " +
                            spec.contract.name + " has none; name one with 'reference'");
    if (const auto* v = t.get("baseline"))
        for (const auto& [k, val] : r.table(*v, "baseline")) {
            const std::string name(k.str());
            if (std::none_of(spec.params.begin(), spec.params.end(),
                             [&](const SweepParam& p) { return p.name == name; }))
                r.fail(k, "baseline names '" + name + "', which is not swept");
            spec.baseline[name] = r.integer(val, name);
        }
}

void read_bench(const TomlReader& r, const toml::node& n, SweepSpec& spec) {
    const auto& t = r.table(n, "bench");
    r.only_keys(t, {"warmup", "reps", "flush_l2", "graph", "bytes", "flops"}, "[bench]");
    if (const auto* v = t.get("graph")) {
        if (!v->is_boolean())
            r.fail(*v, "'graph' must be true or false");
        spec.graph = v->value_or(false);
    }
    if (const auto* v = t.get("warmup"))
        spec.warmup = static_cast<int>(r.integer(*v, "warmup"));
    if (const auto* v = t.get("reps"))
        spec.reps = static_cast<int>(r.integer(*v, "reps"));
    if (spec.reps <= 0)
        r.fail(*t.get("reps"), "'reps' must be positive");
    if (const auto* v = t.get("flush_l2")) {
        if (!v->is_boolean())
            r.fail(*v, "'flush_l2' must be true or false");
        spec.flush_l2 = v->value_or(false);
    }
    if (!spec.inline_contract)
        for (const char* key : {"bytes", "flops"})
            if (const auto* v = t.get(key))
                r.fail(*v, std::string("'") + key + "' comes from the contract of " +
                               spec.contract.name + ": a sweep file does not restate it");
}

} // namespace

Scope SweepSpec::scope(const std::map<std::string, long long>& values) const {
    Scope s;
    for (const auto& [k, v] : shape)
        s[k] = static_cast<double>(v);
    // Numeric defines are usable too (RMS_WIDTH % RMS_BLOCK == 0): the contract's, then fixed.
    for (const Defines* d : {&contract.defines, &defines})
        for (const auto& [k, v] : *d) {
            char* end = nullptr;
            const double x = std::strtod(v.c_str(), &end);
            if (!v.empty() && end && *end == '\0')
                s[k] = x;
        }
    s["dtype_size"] = static_cast<double>(dtype_size(dtype));
    for (const auto& p : contract.launch_params)
        s[p.name] = 0;
    for (const auto& p : params)
        s[p.name] = 0;
    for (const auto& [k, v] : values)
        s[k] = static_cast<double>(v);
    return s;
}

SweepSpec SweepSpec::load(const std::filesystem::path& path) {
    SweepSpec spec;
    spec.file = path.string();
    const TomlReader r{spec.file};
    {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throw ConfigError("cannot read sweep file", spec.file);
        std::ostringstream s;
        s << in.rdbuf();
        spec.text = s.str();
    }
    toml::table root;
    try {
        root = toml::parse(spec.text, spec.file);
    } catch (const toml::parse_error& e) {
        throw ConfigError(std::string(e.description()), spec.file,
                          static_cast<int>(e.source().begin.line),
                          static_cast<int>(e.source().begin.column));
    }
    r.only_keys(root,
                {"kernel", "dtype", "shape", "defines", "sweep", "sweep_launch", "constraints",
                 "launch", "args", "check", "bench"},
                "the sweep file");
    if (!root.contains("kernel"))
        throw ConfigError("the sweep file needs 'kernel = \"NAME\"'", spec.file, 1, 1);
    const toml::node& kernel = *root.get("kernel");
    const std::string name = r.string(kernel, "kernel");
    spec.positions["kernel"] = position(kernel.source());
    const KernelContract* registered = find_contract(name);
    const toml::node* inline_node = root.contains("launch") ? root.get("launch") : root.get("args");
    if (registered && inline_node)
        r.fail(*inline_node, "kernel " + name +
                                 " has a contract (launch, arguments, bytes): a sweep of it "
                                 "states only its space, constraints, check and bench settings");
    if (!registered && !inline_node) {
        std::vector<std::string> known;
        for (const KernelContract* c : kernel_contracts())
            known.push_back(c->name);
        r.fail(kernel, "no contract for kernel '" + name + "' (known: " + joined(known) +
                           "); a kernel without one declares its launch inline: [launch] and "
                           "[[args]]");
    }
    spec.inline_contract = registered == nullptr;
    if (registered)
        spec.contract = *registered;

    if (const auto* n = root.get("shape"))
        for (const auto& [k, v] : r.table(*n, "shape"))
            spec.shape[std::string(k.str())] = r.integer(v, std::string(k.str()));
    if (registered)
        read_contract_shape(r, root, spec);
    if (const auto* n = root.get("defines"))
        for (const auto& [k, v] : r.table(*n, "defines")) {
            std::string value;
            if (const auto* i = v.as_integer())
                value = std::to_string(i->get());
            else
                value = r.string(v, std::string(k.str()));
            spec.positions[std::string(k.str())] = position(k.source());
            try {
                add_define(spec.defines, std::string(k.str()) + "=" + value);
            } catch (const ConfigError& e) {
                r.fail(k, e.message);
            }
        }
    const auto is_launch_param = [&](const std::string& n) {
        return std::any_of(spec.contract.launch_params.begin(), spec.contract.launch_params.end(),
                           [&](const LaunchParam& p) { return p.name == n; });
    };
    for (const char* section : {"sweep", "sweep_launch"})
        if (const auto* n = root.get(section))
            for (const auto& [k, v] : r.table(*n, section)) {
                const std::string pname(k.str());
                const bool define = std::string(section) == "sweep";
                spec.positions[pname] = position(k.source());
                if (spec.shape.contains(pname))
                    r.fail(k, "'" + pname + "' is both a shape entry and a swept parameter");
                Defines probe;
                try {
                    add_define(probe, pname + "=1");
                } catch (const ConfigError& e) {
                    r.fail(k, e.message);
                }
                if (registered && define && is_launch_param(pname))
                    r.fail(k, "'" + pname + "' is a launch parameter of " + name +
                                  ": sweep it under [sweep_launch]");
                if (registered && !define && !is_launch_param(pname)) {
                    std::vector<std::string> known;
                    for (const auto& p : spec.contract.launch_params)
                        known.push_back(p.name);
                    r.fail(k, "'" + pname + "' is not a launch parameter of " + name +
                                  " (known: " + (known.empty() ? "none" : joined(known)) + ")");
                }
                spec.params.push_back({pname, param_values(r, v, pname), define});
            }
    if (spec.params.empty())
        throw ConfigError("the sweep file sweeps nothing: add a [sweep] table", spec.file, 1, 1);
    if (registered) {
        spec.dtype = spec.contract.dtypes.front();
        if (const auto* n = root.get("dtype")) {
            const std::string d = r.string(*n, "dtype");
            const auto& dtypes = spec.contract.dtypes;
            if (std::none_of(dtypes.begin(), dtypes.end(),
                             [&](DType x) { return dtype_name(x) == d; })) {
                std::vector<std::string> known;
                for (DType x : dtypes)
                    known.emplace_back(dtype_name(x));
                r.fail(*n, "kernel " + name + " has no dtype '" + d +
                               "' (dtypes: " + joined(known) + ")");
            }
            spec.dtype = parse_dtype(d);
        }
    }
    const Scope scope = spec.scope({});

    if (const auto* n = root.get("constraints")) {
        const auto* a = n->as_array();
        if (!a)
            r.fail(*n, "'constraints' must be a list of expressions");
        for (const auto& c : *a)
            spec.constraints.push_back(r.expr(c, scope, "constraint"));
    }
    if (spec.inline_contract) {
        InlineContractScope in;
        in.kernel = name;
        for (const auto& [k, v] : spec.shape) {
            in.shape_keys.push_back(k);
            in.shape += (in.shape.empty() ? "" : ",") + k + "=" + std::to_string(v);
        }
        in.defines = spec.defines;
        for (const SweepParam& p : spec.params) {
            if (p.define)
                in.defines[p.name] = std::to_string(p.values.front());
            else
                in.launch_params.push_back({p.name, std::to_string(p.values.front())});
        }
        in.names = scope;
        spec.contract = read_inline_contract(r, root, in);
        spec.dtype = spec.contract.dtypes.front();
        if (const auto* n = root.get("dtype"))
            if (r.string(*n, "dtype") != dtype_name(spec.dtype))
                r.fail(*n, "the inline contract's dtype is its first output's: " +
                               std::string(dtype_name(spec.dtype)));
    }
    spec.kernel = spec.contract.source_name();
    spec.reference = spec.contract.reference;
    if (const auto* n = root.get("check"))
        read_check(r, *n, spec);
    if (const auto* n = root.get("bench"))
        read_bench(r, *n, spec);
    return spec;
}

} // namespace kjit
