#include "tuning/sweep_spec.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "core/text_file.hpp"
#include "core/toml.hpp"
#include "jit/compile_options.hpp"
#include "kernels/contract_toml.hpp"
#include "kernels/registry.hpp"
#include "kernels/shape.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace kjit {

namespace {

/// The most warm-up runs and repetitions a sweep file may ask for.
constexpr long long kMaxReps = 1000000;
constexpr long long kMaxCalls = 10000; // launches per repetition (one graph holds them all)

std::pair<int, int> position(const SourceLocation& where) {
    return {where.line, where.column};
}

/// A [sweep] list as written, before its expressions can be parsed (they read the dtype and
/// every fixed define, known once the whole file has been read).
struct WrittenList {
    std::string param;
    std::vector<std::variant<long long, TomlExpression>> items;
};

/// The values of sweep parameter `name`: a list, {min, max, step} or {pow2 = [min, max]}. A
/// range is kept as its bounds, never expanded here. A list with strings (expressions of the
/// shape) goes to `from_shape` instead, its values left to SweepSpec::set_shape.
SweepParam read_param(const TomlNode& n, const std::string& name, bool define,
                      std::vector<WrittenList>& from_shape) {
    SweepParam p;
    p.name = name;
    p.define = define;
    bool shaped = false; // its values come at each shape
    if (const auto a = n.as_array()) {
        WrittenList written{name, {}};
        for (const TomlNode& v : a->items()) {
            shaped = shaped || v.type() == TomlType::string;
            if (v.type() == TomlType::string)
                written.items.emplace_back(v.expression(name));
            else
                written.items.emplace_back(v.integer(name));
        }
        if (shaped)
            from_shape.push_back(std::move(written));
        else
            for (const auto& item : written.items)
                p.add(std::get<long long>(item));
    } else if (const auto t = n.as_table()) {
        if (const auto pow2 = t->get("pow2")) {
            t->only_keys({"pow2"}, "sweep parameter " + name);
            const auto range = pow2->as_array();
            if (!range || range->size() != 2)
                pow2->fail("'pow2' must be [min, max]");
            p.kind = SweepParam::Kind::pow2;
            p.min = (*range)[0].integer(name);
            p.max = (*range)[1].integer(name);
            // [33, 1024] would start at 64 unsaid: the start is a value of the sweep (the end
            // only bounds it, as a range's max).
            if (p.min < 1 || (p.min & (p.min - 1)) != 0) {
                std::string hint = " (the smallest is 1)";
                if (p.min > 1) { // the powers of two around it
                    const long long below = 1LL << (63 - __builtin_clzll(p.min));
                    hint = " (" + std::to_string(below) +
                           (below <= (1LL << 61) ? " or " + std::to_string(below * 2) : "") + "?)";
                }
                (*range)[0].fail("'pow2' starts at a power of two: " + std::to_string(p.min) +
                                 " is not" + hint);
            }
        } else {
            t->only_keys({"min", "max", "step"}, "sweep parameter " + name);
            if (!t->contains("min") || !t->contains("max"))
                n.fail("a range needs 'min' and 'max' (and optionally 'step')");
            p.kind = SweepParam::Kind::range;
            p.min = t->get("min")->integer("min");
            p.max = t->get("max")->integer("max");
            if (const auto step_node = t->get("step")) {
                p.step = step_node->integer("step");
                if (p.step <= 0)
                    step_node->fail("'step' must be positive");
            }
        }
    } else {
        n.fail("sweep parameter '" + name +
               "' must be a list, {min, max, step} or {pow2 = [min, max]}");
    }
    if (p.size() == 0 && !shaped)
        n.fail("sweep parameter '" + name + "' has no values");
    return p;
}

/// A parameter's values as a message names them: "32, 64, 128", "16 .. 1024 step 16", "the
/// powers of two 1 .. 4096" (a long list by its ends).
std::string values_text(const SweepParam& p) {
    if (p.kind == SweepParam::Kind::range)
        return std::to_string(p.min) + " .. " + std::to_string(p.max) + " step " +
               std::to_string(p.step);
    if (p.kind == SweepParam::Kind::pow2)
        return "the powers of two " + std::to_string(p.min) + " .. " + std::to_string(p.max);
    std::vector<std::string> names;
    const std::size_t n = p.list.size();
    for (std::size_t i = 0; i < n; ++i)
        if (n <= 12 || i < 5 || i >= n - 5)
            names.push_back((n > 12 && i == n - 5 ? "..., " : "") + std::to_string(p.list[i]));
    return join(names);
}

/// An integer setting of [bench] within [lo, hi].
int bounded(const TomlNode& n, std::string_view what, long long lo, long long hi) {
    const long long v = n.integer(what);
    if (v < lo || v > hi)
        n.fail("'" + std::string(what) + "' = " + std::to_string(v) + " is out of range (" +
               std::to_string(lo) + ".." + std::to_string(hi) + ")");
    return static_cast<int>(v);
}

/// [shape] against a registered contract's keys; the contract's bench shape when absent.
void read_contract_shape(const TomlTable& root, SweepSpec& spec) {
    const KernelContract& c = spec.contract;
    const auto n = root.get("shape");
    if (!n) {
        for (const auto& [k, v] : parse_shape(c, c.bench_shape))
            spec.shape[k] = v;
        return;
    }
    for (const TomlEntry& e : n->table("shape").entries())
        if (std::find(c.shape_keys.begin(), c.shape_keys.end(), e.key) == c.shape_keys.end())
            throw ConfigError("'" + e.key + "' is not a shape key of " + c.name +
                                  " (shape keys: " + join(c.shape_keys) + ")",
                              e.key_where);
    for (const auto& k : c.shape_keys)
        if (!spec.shape.contains(k))
            n->fail("[shape] needs '" + k + "' (the shape keys of " + c.name + ": " +
                    join(c.shape_keys) + ")");
}

void read_check(const TomlNode& n, SweepSpec& spec) {
    const TomlTable t = n.table("check");
    t.only_keys({"mode", "rtol", "atol", "reference", "reference_variant", "baseline"},
                "[check]");
    const auto mode_node = t.get("mode");
    const std::string mode = mode_node ? mode_node->string("mode") : "digest";
    if (mode == "digest")
        spec.check = SweepSpec::Check::digest;
    else if (mode == "tolerance")
        spec.check = SweepSpec::Check::tolerance;
    else if (mode == "none")
        spec.check = SweepSpec::Check::none;
    else
        mode_node->fail("unknown check mode '" + mode + "' (known: digest, tolerance, none)");
    if (const auto v = t.get("rtol")) {
        spec.rtol = v->number("rtol");
        if (!std::isfinite(spec.rtol) || spec.rtol < 0)
            v->fail("'rtol' must be a finite number, at least 0");
    }
    // What only a tolerance check reads is refused elsewhere: it would be silently ignored.
    if (spec.check != SweepSpec::Check::tolerance)
        for (const char* key : {"rtol", "atol", "reference", "reference_variant"})
            if (const auto v = t.get(key))
                v->fail("'" + std::string(key) + "' is for mode = \"tolerance\"; this check is " +
                        (spec.check == SweepSpec::Check::digest ? "\"digest\"" : "\"none\""));
    if (const auto v = t.get("atol")) {
        spec.atol = v->number("atol");
        if (!std::isfinite(spec.atol) || spec.atol < 0)
            v->fail("'atol' must be a finite number, at least 0");
    }
    if (const auto v = t.get("reference_variant")) {
        spec.positions["[check] reference_variant"] = position(v->where());
        if (t.contains("reference"))
            v->fail("'reference' (a float64 reference) and 'reference_variant' exclude each "
                    "other: one is what every variant is compared with");
        std::vector<std::string> known;
        for (const SweepParam& p : spec.params)
            known.push_back(p.name);
        for (const auto& [k, _] : spec.defines)
            known.push_back(k);
        for (const auto& [k, _] : spec.contract.defines)
            known.push_back(k);
        for (const LaunchParam& p : spec.contract.launch_params)
            known.push_back(p.name);
        std::sort(known.begin(), known.end());
        known.erase(std::unique(known.begin(), known.end()), known.end());
        for (const TomlEntry& e : v->table("reference_variant").entries()) {
            if (std::find(known.begin(), known.end(), e.key) == known.end())
                throw ConfigError("reference_variant names '" + e.key +
                                      "', which is no define or launch parameter of " +
                                      spec.contract.name + did_you_mean(nearest(e.key, known)),
                                  e.key_where);
            spec.reference_variant[e.key] = e.value.integer(e.key);
        }
        spec.reference.clear(); // the variant named here, not the contract's float64 reference
    }
    if (const auto v = t.get("reference")) {
        spec.reference = v->string("reference");
        if (!find_reference(spec.reference))
            v->fail("no float64 reference is registered as '" + spec.reference +
                    "' (known: " + join(reference_names()) + ")");
    }
    // Without a float64 reference or a reference variant, tolerance mode compares with the
    // contract's reference defines, else with the baseline variant.
    if (spec.check == SweepSpec::Check::tolerance && spec.reference.empty() &&
        spec.reference_variant.empty())
        for (const auto& [k, v] : spec.contract.reference_defines)
            try {
                std::size_t used = 0;
                spec.reference_variant[k] = std::stoll(v, &used);
                if (used != v.size())
                    throw std::invalid_argument(v);
            } catch (const std::exception&) {
                n.fail("the contract's reference define " + k + "=" + v +
                       " is not an integer: name a reference_variant");
            }
    if (const auto v = t.get("baseline"))
        spec.positions["[check] baseline"] = position(v->where());
    if (const auto v = t.get("baseline"))
        for (const TomlEntry& e : v->table("baseline").entries()) {
            const auto p = std::find_if(spec.params.begin(), spec.params.end(),
                                        [&](const SweepParam& p) { return p.name == e.key; });
            if (p == spec.params.end())
                throw ConfigError("baseline names '" + e.key + "', which is not swept",
                                  e.key_where);
            const long long value = e.value.integer(e.key);
            // (A list of the shape's expressions has its values at each shape: set_shape.)
            if (p->size() > 0 && !p->index_of(value))
                e.value.fail("the baseline's " + e.key + " = " + std::to_string(value) +
                             " is not among " + e.key + "'s values (" + values_text(*p) + ")");
            spec.baseline[e.key] = value;
        }
}

void read_search(const TomlNode& n, SweepSpec& spec) {
    const TomlTable t = n.table("search");
    t.only_keys({"strategy", "budget", "seed"}, "[search]");
    const auto strategy = t.get("strategy");
    const std::string name = strategy ? strategy->string("strategy") : "exhaustive";
    if (name == "exhaustive")
        spec.strategy = SweepSpec::Strategy::exhaustive;
    else if (name == "random")
        spec.strategy = SweepSpec::Strategy::random;
    else if (name == "local")
        spec.strategy = SweepSpec::Strategy::local;
    else
        strategy->fail("unknown strategy '" + name + "' (known: exhaustive, random, local)");
    const auto budget = t.get("budget");
    if (spec.strategy == SweepSpec::Strategy::exhaustive) {
        if (budget)
            budget->fail("an exhaustive search evaluates every point: 'budget' is for "
                         "strategy = \"random\" or \"local\"");
    } else {
        if (!budget)
            n.fail("strategy = \"" + name + "\" needs 'budget' (the variants it evaluates)");
        spec.budget = static_cast<std::uint64_t>(bounded(*budget, "budget", 1, 1000000));
    }
    if (const auto v = t.get("seed"))
        spec.seed = static_cast<std::uint64_t>(bounded(*v, "seed", 0, 2147483647));
}

void read_bench(const TomlNode& n, SweepSpec& spec) {
    const TomlTable t = n.table("bench");
    t.only_keys({"warmup", "reps", "flush_l2", "graph", "calls", "bytes", "flops"}, "[bench]");
    if (const auto v = t.get("graph"))
        spec.graph = v->boolean("graph");
    if (const auto v = t.get("warmup"))
        spec.warmup = bounded(*v, "warmup", 0, kMaxReps);
    if (const auto v = t.get("reps")) {
        if (v->integer("reps") <= 0)
            v->fail("'reps' must be positive");
        spec.reps = bounded(*v, "reps", 1, kMaxReps);
    }
    if (const auto v = t.get("flush_l2"))
        spec.flush_l2 = v->boolean("flush_l2");
    if (const auto v = t.get("calls"))
        spec.calls = bounded(*v, "calls", 1, kMaxCalls);
    if (!spec.inline_contract)
        for (const char* key : {"bytes", "flops"})
            if (const auto v = t.get(key))
                v->fail(std::string("'") + key + "' comes from the contract of " +
                        spec.contract.name + ": a sweep file does not restate it");
}

} // namespace

void SweepSpec::set_shape(std::map<std::string, long long> values) {
    // An expression reads every key of the file's shape: a shape without one of them cannot
    // stand in for it.
    for (const auto& [k, v] : shape)
        if (!values.contains(k))
            throw ConfigError("the shape has no '" + k + "', which the sweep file's shape has",
                              file);
    shape = std::move(values);
    const Scope s = scope({});
    for (const ShapeList& l : shape_lists) {
        auto param = std::find_if(params.begin(), params.end(),
                                  [&](const SweepParam& p) { return p.name == l.param; });
        param->list.clear();
        for (const auto& item : l.items) {
            const auto* number = std::get_if<long long>(&item);
            // A value the shape makes equal to another is measured once.
            param->add(number ? *number : std::get<Expr>(item).eval_int(s));
        }
        if (const auto b = baseline.find(l.param);
            b != baseline.end() &&
            std::find(param->list.begin(), param->list.end(), b->second) == param->list.end())
            throw ConfigError("the baseline's " + l.param + " = " + std::to_string(b->second) +
                                  " is not among " + l.param + "'s values at this shape",
                              positions.contains(l.param)
                                  ? SourceLocation{file, positions.at(l.param).first,
                                                   positions.at(l.param).second}
                                  : SourceLocation{file, 0, 0});
    }
}

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
    return parse(read_text_file(path, "sweep file"), path.string());
}

SweepSpec SweepSpec::parse(std::string text, const std::string& file) {
    SweepSpec spec;
    spec.file = file;
    spec.text = std::move(text);
    const TomlDocument doc = TomlDocument::parse(spec.text, spec.file);
    const TomlTable root = doc.root();
    root.only_keys({"kernel", "dtype", "shape", "defines", "sweep", "sweep_launch", "constraints",
                    "launch", "args", "check", "bench", "search"},
                   "the sweep file");
    const auto kernel = root.get("kernel");
    if (!kernel)
        throw ConfigError("the sweep file needs 'kernel = \"NAME\"'", spec.file, 1, 1);
    const std::string name = kernel->string("kernel");
    spec.positions["kernel"] = position(kernel->where());
    const KernelContract* registered = find_contract(name);
    const auto inline_node = root.contains("launch") ? root.get("launch") : root.get("args");
    if (registered && inline_node)
        inline_node->fail("kernel " + name +
                          " has a contract (launch, arguments, bytes): a sweep of it "
                          "states only its space, constraints, check and bench settings");
    if (!registered && !inline_node) {
        std::vector<std::string> known;
        for (const KernelContract* c : kernel_contracts())
            known.push_back(c->name);
        kernel->fail("no contract for kernel '" + name + "' (known: " + join(known) +
                     "); a kernel without one declares its launch inline: [launch] and "
                     "[[args]]");
    }
    spec.inline_contract = registered == nullptr;
    if (registered)
        spec.contract = *registered;

    if (const auto n = root.get("shape"))
        for (const TomlEntry& e : n->table("shape").entries())
            spec.shape[e.key] = e.value.integer(e.key);
    if (registered)
        read_contract_shape(root, spec);
    if (const auto n = root.get("defines"))
        for (const TomlEntry& e : n->table("defines").entries()) {
            const auto i = e.value.as_integer();
            const std::string value = i ? std::to_string(*i) : e.value.string(e.key);
            spec.positions[e.key] = position(e.key_where);
            try {
                add_define(spec.defines, e.key + "=" + value);
            } catch (const ConfigError& err) {
                throw ConfigError(err.message, e.key_where);
            }
        }
    const auto is_launch_param = [&](const std::string& n) {
        return std::any_of(spec.contract.launch_params.begin(), spec.contract.launch_params.end(),
                           [&](const LaunchParam& p) { return p.name == n; });
    };
    std::vector<WrittenList> written_lists;
    for (const char* section : {"sweep", "sweep_launch"})
        if (const auto n = root.get(section))
            for (const TomlEntry& e : n->table(section).entries()) {
                const std::string& pname = e.key;
                const bool define = std::string(section) == "sweep";
                spec.positions[pname] = position(e.key_where);
                if (spec.shape.contains(pname))
                    throw ConfigError("'" + pname + "' is both a shape entry and a swept parameter",
                                      e.key_where);
                if (spec.defines.contains(pname))
                    throw ConfigError("'" + pname +
                                          "' is both a fixed define and a swept parameter",
                                      e.key_where);
                if (std::any_of(spec.params.begin(), spec.params.end(),
                                [&](const SweepParam& p) { return p.name == pname; }))
                    throw ConfigError("'" + pname + "' is swept twice, under [sweep] and [sweep_launch]",
                                      e.key_where);
                Defines probe;
                try {
                    add_define(probe, pname + "=1");
                } catch (const ConfigError& err) {
                    throw ConfigError(err.message, e.key_where);
                }
                if (registered && define && is_launch_param(pname))
                    throw ConfigError("'" + pname + "' is a launch parameter of " + name +
                                          ": sweep it under [sweep_launch]",
                                      e.key_where);
                if (registered && !define && !is_launch_param(pname)) {
                    std::vector<std::string> known;
                    for (const auto& p : spec.contract.launch_params)
                        known.push_back(p.name);
                    throw ConfigError("'" + pname + "' is not a launch parameter of " + name +
                                          " (known: " + (known.empty() ? "none" : join(known)) +
                                          ")",
                                      e.key_where);
                }
                spec.params.push_back(read_param(e.value, pname, define, written_lists));
            }
    if (spec.params.empty())
        throw ConfigError("the sweep file sweeps nothing: add a [sweep] table", spec.file, 1, 1);
    if (registered) {
        spec.dtype = spec.contract.dtypes.front();
        if (const auto n = root.get("dtype")) {
            const std::string d = n->string("dtype");
            const auto& dtypes = spec.contract.dtypes;
            if (std::none_of(dtypes.begin(), dtypes.end(),
                             [&](DType x) { return dtype_name(x) == d; })) {
                std::vector<std::string> known;
                for (DType x : dtypes)
                    known.emplace_back(dtype_name(x));
                n->fail("kernel " + name + " has no dtype '" + d + "' (dtypes: " + join(known) +
                        ")");
            }
            spec.dtype = parse_dtype(d);
        }
    }
    const Scope scope = spec.scope({});
    if (!written_lists.empty()) {
        // A list's expressions read the shape and the fixed defines, never another parameter.
        Scope fixed = scope;
        for (const SweepParam& p : spec.params)
            fixed.erase(p.name);
        for (const auto& p : spec.contract.launch_params)
            fixed.erase(p.name);
        for (const WrittenList& w : written_lists) {
            SweepSpec::ShapeList& l = spec.shape_lists.emplace_back();
            l.param = w.param;
            for (const auto& item : w.items)
                if (const auto* e = std::get_if<TomlExpression>(&item)) {
                    try {
                        l.items.emplace_back(Expr(*e, fixed));
                    } catch (const ConfigError& err) {
                        throw ConfigError(err.message + " (a [sweep] list's expressions read "
                                                        "the shape and the fixed defines)",
                                          err.file, err.line, err.column);
                    }
                } else {
                    l.items.emplace_back(std::get<long long>(item));
                }
        }
        spec.set_shape(spec.shape);
    }

    if (const auto n = root.get("constraints")) {
        const auto a = n->as_array();
        if (!a)
            n->fail("'constraints' must be a list of expressions");
        for (const TomlNode& c : a->items())
            spec.constraints.emplace_back(c.expression("constraint"), scope);
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
                in.defines[p.name] = std::to_string(p.value(0));
            else
                in.launch_params.push_back({p.name, std::to_string(p.value(0))});
        }
        in.names = scope;
        spec.contract = read_inline_contract(root, in);
        spec.dtype = spec.contract.dtypes.front();
        if (const auto n = root.get("dtype"))
            if (n->string("dtype") != dtype_name(spec.dtype))
                n->fail("the inline contract's dtype is its first output's: " +
                        std::string(dtype_name(spec.dtype)));
    }
    spec.kernel = spec.contract.source_name();
    spec.reference = spec.contract.reference;
    if (const auto n = root.get("check"))
        read_check(*n, spec);
    if (const auto n = root.get("bench"))
        read_bench(*n, spec);
    if (const auto n = root.get("search"))
        read_search(*n, spec);
    return spec;
}

} // namespace kjit
