#include "tuning/sweep_spec.hpp"

#include "core/error.hpp"
#include "jit/compile_options.hpp"

#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace kjit {

namespace {

struct Reader {
    std::string file;

    [[noreturn]] void fail(const toml::node& node, const std::string& message) const {
        throw ConfigError(message, file, static_cast<int>(node.source().begin.line),
                          static_cast<int>(node.source().begin.column));
    }
    [[noreturn]] void fail(const toml::key& key, const std::string& message) const {
        throw ConfigError(message, file, static_cast<int>(key.source().begin.line),
                          static_cast<int>(key.source().begin.column));
    }
    void only_keys(const toml::table& t, std::initializer_list<std::string_view> known,
                   const std::string& where) const {
        for (const auto& [k, v] : t) {
            bool ok = false;
            std::string list;
            for (auto n : known) {
                ok = ok || k.str() == n;
                list += (list.empty() ? "" : ", ") + std::string(n);
            }
            if (!ok)
                fail(k, "unknown key '" + std::string(k.str()) + "' in " + where + " (known: " +
                            list + ")");
        }
    }
    const toml::table& table(const toml::node& n, const std::string& what) const {
        if (const auto* t = n.as_table())
            return *t;
        fail(n, "'" + what + "' must be a table");
    }
    long long integer(const toml::node& n, const std::string& what) const {
        if (const auto* i = n.as_integer())
            return i->get();
        fail(n, "'" + what + "' must be an integer");
    }
    std::string string(const toml::node& n, const std::string& what) const {
        if (const auto* s = n.as_string())
            return s->get();
        fail(n, "'" + what + "' must be a string");
    }
    /// An expression given as a string ("rows * n") or an integer; the column points into
    /// the string (after its opening quote).
    Expr expr(const toml::node& n, const Scope& scope, const std::string& what) const {
        std::string text;
        int column = static_cast<int>(n.source().begin.column);
        if (const auto* s = n.as_string()) {
            text = s->get();
            column += 1;
        } else if (const auto* i = n.as_integer()) {
            text = std::to_string(i->get());
        } else if (const auto* f = n.as_floating_point()) {
            std::ostringstream os;
            os.precision(17);
            os << f->get();
            text = os.str();
        } else {
            fail(n, "'" + what + "' must be an expression (a string such as \"rows * n\") or a number");
        }
        return Expr(text, scope, file, static_cast<int>(n.source().begin.line), column);
    }
};

std::vector<long long> param_values(const Reader& r, const toml::node& n, const std::string& name) {
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
            const long long lo = r.integer(*range->get(0), name), hi = r.integer(*range->get(1), name);
            for (long long v = 1; v <= hi; v *= 2)
                if (v >= lo)
                    out.push_back(v);
        } else {
            r.only_keys(*t, {"min", "max", "step"}, "sweep parameter " + name);
            if (!t->contains("min") || !t->contains("max"))
                r.fail(n, "a range needs 'min' and 'max' (and optionally 'step')");
            const long long lo = r.integer(*t->get("min"), "min"), hi = r.integer(*t->get("max"), "max");
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

std::vector<Expr> dims(const Reader& r, const toml::node& n, const Scope& scope,
                       const std::string& what) {
    std::vector<Expr> out;
    if (const auto* a = n.as_array()) {
        if (a->empty() || a->size() > 3)
            r.fail(n, "'" + what + "' takes 1 to 3 expressions");
        for (const auto& v : *a)
            out.push_back(r.expr(v, scope, what));
    } else {
        out.push_back(r.expr(n, scope, what));
    }
    return out;
}

} // namespace

Scope SweepSpec::scope(const std::map<std::string, long long>& values) const {
    Scope s;
    for (const auto& [k, v] : shape)
        s[k] = static_cast<double>(v);
    // Fixed defines with a numeric value are usable too (RMS_WIDTH % RMS_BLOCK == 0).
    for (const auto& [k, v] : defines) {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (!v.empty() && end && *end == '\0')
            s[k] = d;
    }
    for (const auto& p : params)
        s[p.name] = 0;
    for (const auto& [k, v] : values)
        s[k] = static_cast<double>(v);
    return s;
}

SweepSpec SweepSpec::load(const std::filesystem::path& path) {
    SweepSpec spec;
    spec.file = path.string();
    const Reader r{spec.file};
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
    r.only_keys(root, {"kernel", "shape", "defines", "sweep", "sweep_launch", "constraints", "launch", "args",
                       "check", "bench"},
                "the sweep file");
    if (!root.contains("kernel"))
        throw ConfigError("the sweep file needs 'kernel = \"NAME\"'", spec.file, 1, 1);
    spec.kernel = r.string(*root.get("kernel"), "kernel");
    spec.positions["kernel"] = {static_cast<int>(root.get("kernel")->source().begin.line),
                                static_cast<int>(root.get("kernel")->source().begin.column)};
    if (const auto* n = root.get("shape"))
        for (const auto& [k, v] : r.table(*n, "shape"))
            spec.shape[std::string(k.str())] = r.integer(v, std::string(k.str()));
    if (const auto* n = root.get("defines"))
        for (const auto& [k, v] : r.table(*n, "defines")) {
            std::string value;
            if (const auto* i = v.as_integer())
                value = std::to_string(i->get());
            else
                value = r.string(v, std::string(k.str()));
            spec.positions[std::string(k.str())] = {static_cast<int>(k.source().begin.line),
                                                    static_cast<int>(k.source().begin.column)};
            try {
                add_define(spec.defines, std::string(k.str()) + "=" + value);
            } catch (const ConfigError& e) {
                r.fail(k, e.message);
            }
        }
    for (const char* section : {"sweep", "sweep_launch"})
        if (const auto* n = root.get(section))
            for (const auto& [k, v] : r.table(*n, section)) {
                const std::string name(k.str());
                spec.positions[name] = {static_cast<int>(k.source().begin.line),
                                        static_cast<int>(k.source().begin.column)};
                if (spec.shape.contains(name))
                    r.fail(k, "'" + name + "' is both a shape entry and a swept parameter");
                std::map<std::string, std::string> probe;
                try {
                    add_define(probe, name + "=1");
                } catch (const ConfigError& e) {
                    r.fail(k, e.message);
                }
                spec.params.push_back({name, param_values(r, v, name), std::string(section) == "sweep"});
            }
    if (spec.params.empty())
        throw ConfigError("the sweep file sweeps nothing: add a [sweep] table", spec.file, 1, 1);
    const Scope scope = spec.scope({});

    if (const auto* n = root.get("constraints")) {
        const auto* a = n->as_array();
        if (!a)
            r.fail(*n, "'constraints' must be a list of expressions");
        for (const auto& c : *a)
            spec.constraints.push_back(r.expr(c, scope, "constraint"));
    }
    const auto* launch = root.get("launch");
    if (!launch)
        throw ConfigError("the sweep file needs a [launch] table (entry, grid, block)", spec.file, 1, 1);
    const auto& lt = r.table(*launch, "launch");
    r.only_keys(lt, {"entry", "grid", "block", "smem"}, "[launch]");
    for (const char* required : {"entry", "grid", "block"})
        if (!lt.contains(required))
            r.fail(*launch, std::string("[launch] needs '") + required + "'");
    spec.entry = r.string(*lt.get("entry"), "entry");
    spec.grid = dims(r, *lt.get("grid"), scope, "grid");
    spec.block = dims(r, *lt.get("block"), scope, "block");
    if (const auto* s = lt.get("smem"))
        spec.smem = r.expr(*s, scope, "smem");

    const auto* args = root.get("args");
    if (!args || !args->is_array_of_tables())
        throw ConfigError("the sweep file needs [[args]] tables, one per kernel parameter", spec.file, 1, 1);
    std::set<std::string> names;
    for (const auto& node : *args->as_array()) {
        const auto& t = *node.as_table();
        r.only_keys(t, {"name", "type", "count", "value", "init", "output"}, "[[args]]");
        SweepArg a;
        a.line = static_cast<int>(t.source().begin.line);
        if (!t.contains("name") || !t.contains("type"))
            r.fail(node, "[[args]] needs 'name' and 'type'");
        a.name = r.string(*t.get("name"), "name");
        if (!names.insert(a.name).second)
            r.fail(*t.get("name"), "argument '" + a.name + "' appears twice");
        const std::string type = r.string(*t.get("type"), "type");
        if (type == "f32*" || type == "bf16*") {
            a.pointer = true;
            a.dtype = type == "f32*" ? DType::f32 : DType::bf16;
        } else if (type == "i32" || type == "f32") {
            a.is_int = type == "i32";
        } else {
            r.fail(*t.get("type"), "unknown type '" + type + "' (known: f32*, bf16*, i32, f32)");
        }
        if (a.pointer) {
            if (!t.contains("count"))
                r.fail(node, "buffer argument '" + a.name + "' needs 'count' (elements)");
            a.count = r.expr(*t.get("count"), scope, "count");
            a.output = t.contains("output") && t.get("output")->value_or(false);
            a.in_out = a.output && t.contains("init");
            const std::string init = t.contains("init") ? r.string(*t.get("init"), "init")
                                                        : (a.output ? "zeros" : "random");
            if (init == "random")
                a.init = SweepArg::Init::random;
            else if (init == "zeros")
                a.init = SweepArg::Init::zeros;
            else if (init == "value") {
                a.init = SweepArg::Init::value;
                if (!t.contains("value"))
                    r.fail(*t.get("init"), "init = \"value\" needs 'value'");
            } else
                r.fail(*t.get("init"), "unknown init '" + init + "' (known: random, zeros, value)");
            if (t.contains("value"))
                a.value = r.expr(*t.get("value"), scope, "value");
        } else {
            if (!t.contains("value"))
                r.fail(node, "scalar argument '" + a.name + "' needs 'value'");
            a.value = r.expr(*t.get("value"), scope, "value");
        }
        spec.args.push_back(std::move(a));
    }
    if (std::none_of(spec.args.begin(), spec.args.end(), [](const SweepArg& a) { return a.output; }))
        throw ConfigError("no argument is marked 'output = true': nothing to check", spec.file, 1, 1);

    if (const auto* n = root.get("check")) {
        const auto& t = r.table(*n, "check");
        r.only_keys(t, {"mode", "rtol", "reference", "baseline"}, "[check]");
        const std::string mode = t.contains("mode") ? r.string(*t.get("mode"), "mode") : "digest";
        if (mode == "digest")
            spec.check = Check::digest;
        else if (mode == "tolerance")
            spec.check = Check::tolerance;
        else if (mode == "none")
            spec.check = Check::none;
        else
            r.fail(*t.get("mode"), "unknown check mode '" + mode + "' (known: digest, tolerance, none)");
        if (const auto* v = t.get("rtol")) {
            if (!v->is_number())
                r.fail(*v, "'rtol' must be a number");
            spec.rtol = v->value_or(1e-5);
        }
        if (const auto* v = t.get("reference"))
            spec.reference = r.string(*v, "reference");
        if (spec.check == Check::tolerance && spec.reference.empty())
            r.fail(*n, "tolerance mode needs 'reference' (a float64 reference: rms_norm, conv1d, delta_rule)");
        if (const auto* v = t.get("baseline"))
            for (const auto& [k, val] : r.table(*v, "baseline")) {
                const std::string name(k.str());
                if (std::none_of(spec.params.begin(), spec.params.end(),
                                 [&](const SweepParam& p) { return p.name == name; }))
                    r.fail(k, "baseline names '" + name + "', which is not swept");
                spec.baseline[name] = r.integer(val, name);
            }
    }
    if (const auto* n = root.get("bench")) {
        const auto& t = r.table(*n, "bench");
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
        if (const auto* v = t.get("bytes"))
            spec.bytes = r.expr(*v, scope, "bytes");
        if (const auto* v = t.get("flops"))
            spec.flops = r.expr(*v, scope, "flops");
    }
    return spec;
}

std::string SweepVariant::label() const {
    std::string s;
    for (const auto& [k, v] : params)
        s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return s;
}

std::vector<SweepVariant> expand(const SweepSpec& spec, std::size_t* rejected) {
    std::vector<SweepVariant> out;
    std::size_t dropped = 0;
    std::vector<std::size_t> idx(spec.params.size(), 0);
    const auto dim3_of = [&](const std::vector<Expr>& e, const Scope& s) {
        Dim3 d;
        unsigned* f[3] = {&d.x, &d.y, &d.z};
        for (std::size_t i = 0; i < e.size(); ++i) {
            const long long v = e[i].eval_int(s);
            if (v <= 0 || v > 0xffffffffLL)
                throw ConfigError("'" + e[i].text() + "' = " + std::to_string(v) +
                                  " is not a valid launch dimension", spec.file);
            *f[i] = static_cast<unsigned>(v);
        }
        return d;
    };
    while (true) {
        SweepVariant v;
        for (std::size_t p = 0; p < spec.params.size(); ++p)
            v.params[spec.params[p].name] = spec.params[p].values[idx[p]];
        const Scope s = spec.scope(v.params);
        bool ok = true;
        for (const auto& c : spec.constraints)
            ok = ok && c.eval(s) != 0.0;
        if (ok) {
            v.defines = spec.defines;
            for (const auto& p : spec.params)
                if (p.define)
                    v.defines[p.name] = std::to_string(v.params[p.name]);
            v.grid = dim3_of(spec.grid, s);
            v.block = dim3_of(spec.block, s);
            v.smem = spec.smem ? static_cast<unsigned>(spec.smem->eval_int(s)) : 0;
            out.push_back(std::move(v));
        } else {
            ++dropped;
        }
        std::size_t p = spec.params.size();
        while (p > 0) {
            --p;
            if (++idx[p] < spec.params[p].values.size())
                break;
            idx[p] = 0;
            if (p == 0) {
                p = static_cast<std::size_t>(-1);
                break;
            }
        }
        if (p == static_cast<std::size_t>(-1))
            break;
    }
    if (rejected)
        *rejected = dropped;
    if (out.empty())
        throw ConfigError("no variant satisfies the constraints (" + std::to_string(dropped) +
                              " rejected)",
                          spec.file);
    // The baseline: the variant the [check] table names, else the first.
    std::size_t base = 0;
    if (!spec.baseline.empty()) {
        base = out.size();
        for (std::size_t i = 0; i < out.size(); ++i) {
            bool match = true;
            for (const auto& [k, v] : spec.baseline)
                match = match && out[i].params.at(k) == v;
            if (match) {
                base = i;
                break;
            }
        }
        if (base == out.size())
            throw ConfigError("the baseline variant is not among the variants that satisfy the "
                              "constraints",
                              spec.file);
    }
    out[base].baseline = true;
    return out;
}

} // namespace kjit
