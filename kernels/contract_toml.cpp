#include "kernels/contract_toml.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "jit/compile_options.hpp"
#include "kernels/plan.hpp"
#include "kernels/registry.hpp"
#include "kernels/shape.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace kjit {

namespace {

/// Keeps where `e` is written under `key` (see KernelContract::where) and, with `names`,
/// checks it against them (a contract file's expressions are checked when it is planned, at
/// the same place); its text.
std::string expression(const TomlExpression& e, const Scope* names, const std::string& key,
                       std::map<std::string, SourceLocation>& where) {
    where[key] = e.where;
    return names ? Expr(e, *names).text() : e.text;
}
std::string expression(const TomlExpression& e, const Scope& names, const std::string& key,
                       std::map<std::string, SourceLocation>& where) {
    return expression(e, &names, key, where);
}

/// 1 to 3 launch dimensions of step `step` (1-based), each an expression.
std::vector<std::string> dims(const TomlNode& n, const Scope* names, std::size_t step,
                              std::string_view what, std::map<std::string, SourceLocation>& where) {
    std::vector<std::string> out;
    for (const TomlExpression& e : n.expressions(what, 1, 3))
        out.push_back(expression(e, names,
                                 "step " + std::to_string(step) + " " + std::string(what) + "[" +
                                     std::to_string(out.size()) + "]",
                                 where));
    return out;
}

/// `output = ...` as the sweep file has always read it: true, or a non-zero integer.
bool is_output(const TomlTable& t) {
    const auto n = t.get("output");
    if (!n)
        return false;
    if (const auto b = n->as_boolean())
        return *b;
    return n->as_integer().value_or(0) != 0;
}

/// One [[args]] table as a contract argument.
ContractArg read_arg(const TomlTable& t, const Scope* names, std::set<std::string>& seen,
                     std::map<std::string, SourceLocation>& where) {
    t.only_keys({"name", "type", "count", "value", "init", "scale", "offset", "output",
                 "workspace", "tolerance"},
                "[[args]]");
    if (!t.contains("name") || !t.contains("type"))
        t.fail("[[args]] needs 'name' and 'type'");
    ContractArg a;
    const TomlNode name = *t.get("name");
    a.name = name.string("name");
    if (!seen.insert(a.name).second)
        name.fail("argument '" + a.name + "' appears twice");
    const TomlNode type_node = *t.get("type");
    const std::string type = type_node.string("type");
    where["argument " + a.name + " type"] = type_node.where();
    static const std::map<std::string, ArgType, std::less<>> buffers{
        {"f32*", ArgType::f32}, {"bf16*", ArgType::bf16}, {"dtype*", ArgType::dtype}};
    static const std::map<std::string, ArgType, std::less<>> scalars{
        {"i32", ArgType::i32}, {"u32", ArgType::u32}, {"i64", ArgType::i64},
        {"u64", ArgType::u64}, {"f32", ArgType::f32}, {"f64", ArgType::f64}};
    if (const auto b = buffers.find(type); b != buffers.end()) {
        a.type = b->second;
    } else if (const auto sc = scalars.find(type); sc != scalars.end()) {
        a.role = ArgRole::scalar;
        a.type = sc->second;
    } else {
        type_node.fail("unknown type '" + type +
                       "' (known: buffers f32*, bf16*, dtype* (the case's dtype); scalars i32, "
                       "u32, i64, u64, f32, f64)");
    }
    const std::string what = "argument " + a.name;
    if (a.role == ArgRole::scalar) {
        for (const char* key : {"count", "init", "scale", "offset", "output", "workspace",
                                "tolerance"})
            if (const auto n = t.get(key))
                n->fail("'" + std::string(key) + "' is for buffers; scalar '" + a.name +
                        "' takes 'value'");
        if (!t.contains("value"))
            t.fail("scalar argument '" + a.name + "' needs 'value'");
        a.value = expression(t.get("value")->expression("value"), names, what + " value", where);
        return a;
    }
    if (!t.contains("count"))
        t.fail("buffer argument '" + a.name + "' needs 'count' (elements)");
    a.count = expression(t.get("count")->expression("count"), names, what + " count", where);
    const bool output = is_output(t);
    const auto workspace = t.get("workspace");
    if (workspace && workspace->boolean("workspace")) {
        if (output)
            workspace->fail("'" + a.name + "' is an output and a workspace: a workspace is "
                            "scratch the steps share, never checked");
        for (const char* key : {"init", "value", "scale", "offset", "tolerance"})
            if (const auto n = t.get(key))
                n->fail("'" + std::string(key) + "' does not apply to workspace '" + a.name +
                        "' (filled with the canary before each run)");
        a.role = ArgRole::workspace;
        return a;
    }
    const auto init_node = t.get("init");
    const std::string init = init_node ? init_node->string("init") : (output ? "zeros" : "random");
    // An output given an init is read and written: a state updated in place.
    a.role = output ? (init_node ? ArgRole::in_out : ArgRole::output) : ArgRole::input;
    if (init == "zeros") {
        a.scale = "0";
    } else if (init == "value") {
        if (!t.contains("value"))
            init_node->fail("init = \"value\" needs 'value'");
        a.scale = "0";
        a.offset = expression(t.get("value")->expression("value"), names, what + " offset", where);
    } else if (init != "random") {
        init_node->fail("unknown init '" + init + "' (known: random, zeros, value)");
    }
    // Without init = "value" a buffer's 'value' would fill nothing: its inputs stay random.
    if (const auto n = t.get("value"); n && init != "value")
        n->fail("'value' fills buffer '" + a.name +
                "' only with init = \"value\"; it is init = \"" + init + "\"" +
                (init_node ? "" : " (the default)"));
    for (const char* key : {"scale", "offset"})
        if (const auto n = t.get(key)) {
            if (init != "random")
                n->fail("'" + std::string(key) + "' shapes random inputs (uniform * scale + "
                        "offset); '" + a.name + "' is init = \"" + init + "\"");
            (key == std::string("scale") ? a.scale : a.offset) =
                expression(n->expression(key), names, what + " " + key, where);
        }
    if (const auto n = t.get("tolerance")) {
        if (a.role == ArgRole::input)
            n->fail("'tolerance' applies to outputs; '" + a.name + "' is an input");
        a.tolerance = n->number("tolerance");
        if (!(a.tolerance > 0) || !std::isfinite(a.tolerance))
            n->fail("'tolerance' must be a positive number (the relative L2 error allowed)");
    }
    return a;
}

/// The [[args]] tables of the file, or nullopt when there are none.
std::optional<std::vector<TomlTable>> args_tables(const TomlTable& root) {
    const auto args = root.get("args");
    const auto list = args ? args->as_array() : std::nullopt;
    if (!list || list->empty())
        return std::nullopt;
    std::vector<TomlTable> out;
    for (const TomlNode& item : list->items()) {
        const auto t = item.as_table();
        if (!t)
            return std::nullopt;
        out.push_back(*t);
    }
    return out;
}

} // namespace

KernelContract read_inline_contract(const TomlTable& root, const InlineContractScope& scope) {
    const SourceLocation file_start{root.where().path, 1, 1};
    KernelContract c;
    c.name = scope.kernel;
    c.shape_keys = scope.shape_keys;
    c.defines = scope.defines;
    c.launch_params = scope.launch_params;
    c.bench_shape = scope.shape;

    const auto launch = root.get("launch");
    if (!launch)
        throw ConfigError("the sweep file needs a [launch] table (entry, grid, block)", file_start);
    const TomlTable lt = launch->table("launch");
    lt.only_keys({"entry", "grid", "block", "smem"}, "[launch]");
    for (const char* required : {"entry", "grid", "block"})
        if (!lt.contains(required))
            launch->fail(std::string("[launch] needs '") + required + "'");
    const std::string entry = lt.get("entry")->string("entry");
    c.where["step 1 entry"] = lt.get("entry")->where();
    c.where["step 1"] = lt.where();
    PipelineStep step;
    step.grid = dims(*lt.get("grid"), &scope.names, 1, "grid", c.where);
    step.block = dims(*lt.get("block"), &scope.names, 1, "block", c.where);
    if (const auto s = lt.get("smem"))
        step.smem = expression(s->expression("smem"), scope.names, "step 1 smem", c.where);

    const auto args = args_tables(root);
    if (!args)
        throw ConfigError("the sweep file needs [[args]] tables, one per kernel parameter",
                          file_start);
    std::set<std::string> seen;
    DType dtype = DType::f32;
    bool have_dtype = false;
    for (const TomlTable& t : *args) {
        ContractArg a = read_arg(t, &scope.names, seen, c.where);
        // The case's dtype is the first output's: its entry point is compiled for it.
        if (!have_dtype && is_checked(a.role)) {
            dtype = a.type == ArgType::bf16 ? DType::bf16 : DType::f32;
            have_dtype = true;
        }
        c.args.push_back(std::move(a));
    }
    if (!have_dtype)
        throw ConfigError("no argument is marked 'output = true': nothing to check", file_start);
    c.dtypes = {dtype};
    step.entry = {{dtype, entry}};
    c.pipeline = {std::move(step)};

    if (const auto n = root.get("bench")) {
        const TomlTable t = n->table("bench");
        if (const auto v = t.get("bytes"))
            c.bytes = expression(v->expression("bytes"), scope.names, "bytes", c.where);
        if (const auto v = t.get("flops"))
            c.flops = expression(v->expression("flops"), scope.names, "flops", c.where);
    }
    return c;
}


namespace {

/// A shape written as a table ({ rows = 4096, n = 7168 }), as the contract's shape text,
/// checked (keys, values, the contract's preconditions) by planning it at `dtype` with
/// `defines`; a mistake at the table.
std::string contract_shape(const TomlNode& n, const ContractPlanner& planner, DType dtype,
                           const Defines& defines, std::string_view what) {
    const TomlTable t = n.table(what);
    std::string text;
    for (const TomlEntry& e : t.entries())
        text += (text.empty() ? "" : ",") + e.key + "=" + std::to_string(e.value.integer(e.key));
    try {
        const KernelContract& c = planner.contract();
        text = shape_text(c, parse_shape(c, text)); // the contract's key order
        (void)planner.plan(parse_shape(c, text), dtype, defines);
    } catch (const PreconditionError& e) {
        n.fail(std::string(what) + ": " + e.message); // the shape's own mistake
    } catch (const ConfigError& e) {
        if (e.file.empty())
            n.fail(std::string(what) + ": " + e.message);
        // What the contract writes (a launch dimension, a count) fails at this shape: at the
        // expression, naming the shape and its line.
        throw ConfigError(std::string(what) + " " + text + " (line " +
                              std::to_string(n.where().line) + "): " + e.message,
                          e.file, e.line, e.column);
    }
    return text;
}

/// A `dtypes` list: each name parsed, an unknown one an error at its item.
std::vector<DType> dtype_list(const TomlNode& n) {
    std::vector<DType> out;
    for (const TomlNode& item : n.array("dtypes").items())
        try {
            out.push_back(parse_dtype(item.string("dtypes")));
        } catch (const ConfigError& e) {
            item.fail(e.message);
        }
    return out;
}

/// A table of defines (NAME = integer, string or boolean).
Defines defines_table(const TomlNode& n, std::string_view what) {
    Defines out;
    for (const TomlEntry& e : n.table(what).entries())
        try {
            add_define(out, e.key + "=" + e.value.define_value());
        } catch (const ConfigError& err) {
            throw ConfigError(std::string(what) + ": " + err.message, e.key_where);
        }
    return out;
}

/// The [[step]] table `t`, step `index` (1-based) of contract `c`.
PipelineStep read_step(const TomlTable& t, std::size_t index, KernelContract& c,
                       const std::set<std::string>& arg_names) {
    const std::string what = "step " + std::to_string(index);
    PipelineStep step;
    if (t.contains("from") || t.contains("to")) {
        t.only_keys({"from", "to"}, "a copy [[step]]");
        step.kind = PipelineStep::Kind::copy;
        step.from = t.required("from", "a copy [[step]]").string("from");
        step.to = t.required("to", "a copy [[step]]").string("to");
        for (const auto& [key, buffer] : {std::pair{"from", step.from}, std::pair{"to", step.to}}) {
            const std::string& name = buffer; // clang 14: no lambda capture of a structured binding
            const auto arg = std::find_if(c.args.begin(), c.args.end(),
                                          [&](const ContractArg& a) { return a.name == name; });
            if (arg == c.args.end() || arg->role == ArgRole::scalar)
                t.get(key)->fail(what + " copies '" + name + "', which is no buffer argument");
        }
        return step;
    }
    t.only_keys({"entry", "grid", "block", "smem", "args", "main"}, "[[step]]");
    if (const auto n = t.get("main"))
        step.main = n->boolean("main");
    const TomlNode entry = t.required("entry", "a launch [[step]]");
    c.where[what + " entry"] = entry.where();
    c.where[what] = t.contains("args") ? t.get("args")->where() : t.where();
    if (const auto name = entry.as_string()) {
        for (DType d : c.dtypes)
            step.entry[d] = *name;
    } else {
        for (const TomlEntry& e : entry.table("entry").entries()) {
            DType d{};
            try {
                d = parse_dtype(e.key);
            } catch (const ConfigError& err) {
                throw ConfigError(err.message, e.key_where);
            }
            if (std::find(c.dtypes.begin(), c.dtypes.end(), d) == c.dtypes.end())
                throw ConfigError("entry point for dtype " + e.key +
                                      ", which 'dtypes' does not list",
                                  e.key_where);
            step.entry[d] = e.value.string(e.key);
        }
        for (DType d : c.dtypes)
            if (!step.entry.contains(d))
                entry.fail(what + " has no entry point for dtype " + std::string(dtype_name(d)));
    }
    step.grid = dims(t.required("grid", "a launch [[step]]"), nullptr, index, "grid", c.where);
    step.block = dims(t.required("block", "a launch [[step]]"), nullptr, index, "block", c.where);
    if (const auto n = t.get("smem"))
        step.smem = expression(n->expression("smem"), nullptr, what + " smem", c.where);
    if (const auto n = t.get("args")) {
        const auto list = n->array("args");
        for (const TomlNode& item : list.items()) {
            step.args.push_back(item.string("args"));
            if (!arg_names.contains(step.args.back()))
                item.fail(what + " passes '" + step.args.back() + "', which is no [[args]] name");
        }
    }
    return step;
}

} // namespace

namespace {

KernelContract read_contract(const TomlDocument& doc) {
    const std::string& file = doc.file();
    const TomlTable root = doc.root();
    const SourceLocation file_start{file, 1, 1};
    root.only_keys({"name", "source", "shape", "dtypes", "defines", "launch_params",
                    "precondition", "args", "step", "bytes", "flops", "reference",
                    "reference_defines", "bench_shape", "check", "digest_shapes"},
                   "the contract file");
    KernelContract c;
    const TomlNode name = root.required("name", "the contract file");
    c.name = name.string("name");
    c.where["source"] = name.where();
    if (const auto n = root.get("source")) {
        c.source = n->string("source");
        c.where["source"] = n->where();
    }
    c.shape_keys = root.required("shape", "the contract file").strings("shape");
    const auto dtypes = root.get("dtypes");
    c.dtypes = dtypes ? dtype_list(*dtypes) : std::vector{DType::f32};
    if (const auto n = root.get("defines")) {
        c.defines = defines_table(*n, "defines");
        for (const TomlEntry& e : n->table("defines").entries())
            c.where["define " + e.key] = e.key_where;
    }
    if (const auto n = root.get("launch_params"))
        for (const TomlEntry& e : n->table("launch_params").entries())
            c.launch_params.push_back(
                {e.key, expression(e.value.expression(e.key), nullptr,
                                   "launch parameter " + e.key, c.where)});
    if (const auto n = root.get("precondition"))
        for (const TomlTable& t : n->tables("precondition")) {
            t.only_keys({"expr", "message"}, "[[precondition]]");
            Precondition p;
            p.expr = expression(t.required("expr", "[[precondition]]").expression("expr"),
                                nullptr,
                                "precondition " + std::to_string(c.preconditions.size() + 1),
                                c.where);
            if (const auto m = t.get("message"))
                p.message = m->string("message");
            c.preconditions.push_back(std::move(p));
        }
    std::set<std::string> arg_names;
    for (const TomlTable& t : root.required("args", "the contract file").tables("args"))
        c.args.push_back(read_arg(t, nullptr, arg_names, c.where));
    const auto steps = root.required("step", "the contract file").tables("step");
    for (const TomlTable& t : steps) {
        c.pipeline.push_back(read_step(t, c.pipeline.size() + 1, c, arg_names));
        if (c.pipeline.back().main &&
            std::count_if(c.pipeline.begin(), c.pipeline.end(),
                          [](const PipelineStep& s) { return s.main; }) > 1)
            t.get("main")->fail("another step is marked main already: reports describe one "
                                "launch");
    }
    if (const auto n = root.get("bytes"))
        c.bytes = expression(n->expression("bytes"), nullptr, "bytes", c.where);
    if (const auto n = root.get("flops"))
        c.flops = expression(n->expression("flops"), nullptr, "flops", c.where);
    if (const auto n = root.get("reference")) {
        c.reference = n->string("reference");
        if (!find_reference(c.reference)) {
            const std::string known = join(reference_names());
            n->fail("no float64 reference is registered as '" + c.reference + "' (known: " +
                    (known.empty() ? "none" : known) +
                    "); without one, name 'reference_defines' to compare with");
        }
    }
    // The structure and every expression, at the place a mistake is written where it can be
    // told; then the shapes, each planned at its table.
    ContractPlanner planner = [&] {
        try {
            return ContractPlanner(c);
        } catch (const ConfigError& e) {
            if (!e.file.empty())
                throw;
            throw ConfigError(e.message, file_start);
        }
    }();
    if (const auto n = root.get("reference_defines")) {
        c.reference_defines = defines_table(*n, "reference_defines");
        std::vector<std::string> known;
        for (const auto& [k, _] : c.defines)
            known.push_back(k);
        // After the expressions: a misspelt [defines] name that they read is reported there
        // ("unknown name 'SPLIT_K'; did you mean SPLT_K?"), not blamed on the reference define
        // that spells it right.
        for (const TomlEntry& e : n->table("reference_defines").entries()) {
            c.where["reference define " + e.key] = e.key_where;
            if (c.defines.contains(e.key))
                continue;
            // A near name in [defines]: say where it is set, for the one of the two that is off.
            const std::vector<std::string> near = nearest(e.key, known);
            const auto at = near.size() == 1 ? c.where.find("define " + near[0]) : c.where.end();
            throw ConfigError("reference define " + e.key + " is none of the contract's [defines]" +
                                  (at != c.where.end() ? "; did you mean " + near[0] + " (line " +
                                                             std::to_string(at->second.line) + ")?"
                                                       : did_you_mean(near)),
                              e.key_where);
        }
    }

    if (const auto n = root.get("bench_shape"))
        c.bench_shape = contract_shape(*n, planner, c.dtypes.front(), {}, "bench_shape");
    if (const auto n = root.get("digest_shapes"))
        for (const TomlNode& item : n->array("digest_shapes").items()) {
            std::string shape;
            for (DType d : c.dtypes)
                shape = contract_shape(item, planner, d, {}, "digest_shapes");
            c.digest_shapes.push_back(std::move(shape));
        }
    if (const auto n = root.get("check"))
        for (const TomlTable& t : n->tables("check")) {
            t.only_keys({"shape", "dtypes", "defines"}, "[[check]]");
            c.where["[[check]] " + std::to_string(c.check_shapes.size() + 1)] = t.where();
            CheckShape cs;
            if (const auto d = t.get("dtypes"))
                cs.dtypes = dtype_list(*d);
            Defines defines;
            if (const auto d = t.get("defines")) {
                defines = defines_table(*d, "defines");
                for (const auto& [k, v] : defines)
                    cs.defines.push_back(k + "=" + v);
                for (const TomlEntry& e : d->table("defines").entries())
                    c.where["[[check]] " + std::to_string(c.check_shapes.size() + 1) +
                            " define " + e.key] = e.key_where;
            }
            if (const std::string problem = self_reference_problem(c, defines); !problem.empty())
                t.fail("this check case compares nothing: " + problem);
            const TomlNode shape = t.required("shape", "[[check]]");
            for (DType d : cs.dtypes.empty() ? c.dtypes : cs.dtypes) {
                cs.shape = contract_shape(shape, planner, d, defines, "shape");
                if (!c.reference_defines.empty())
                    (void)contract_shape(shape, planner, d, with_reference_defines(c, defines),
                                         "shape (with the reference defines)");
            }
            c.check_shapes.push_back(std::move(cs));
        }
    // What is left (a check shape without anything to compare with, ...) at the file.
    try {
        validate_contract(c);
    } catch (const ConfigError& e) {
        if (!e.file.empty())
            throw;
        throw ConfigError(e.message, file_start);
    }
    return c;
}

} // namespace

KernelContract parse_contract(std::string_view text, const std::string& file) {
    return read_contract(TomlDocument::parse(text, file));
}

KernelContract load_contract(const std::filesystem::path& path) {
    return read_contract(TomlDocument::load(path, "contract file"));
}

std::vector<std::string> register_project_contracts(const Project& project) {
    // A file an earlier call registered is not registered again (the registry refuses a name
    // twice); one listed twice in the project is, and is refused.
    static std::mutex mutex;
    static std::set<std::filesystem::path> earlier;
    const std::lock_guard lock(mutex);
    std::vector<std::string> names;
    std::set<std::filesystem::path> now;
    for (const ProjectPath& file : project.contracts) {
        const std::filesystem::path key = std::filesystem::absolute(file.path).lexically_normal();
        KernelContract c = load_contract(display_path(file.path));
        names.push_back(c.name);
        if (earlier.count(key))
            continue;
        try {
            register_contract(std::move(c));
        } catch (const ConfigError& e) { // a name taken by another contract
            earlier.insert(now.begin(), now.end());
            throw ConfigError(e.message, file.where);
        }
        now.insert(key);
    }
    earlier.insert(now.begin(), now.end());
    return names;
}

} // namespace kjit
