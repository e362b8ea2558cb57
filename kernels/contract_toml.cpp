#include "kernels/contract_toml.hpp"

#include "core/error.hpp"

#include <map>
#include <optional>
#include <set>

namespace kjit {

namespace {

/// Checks `e` against `names` and keeps where it is written under `key` (see
/// KernelContract::where); its text.
std::string expression(const TomlExpression& e, const Scope& names, const std::string& key,
                       std::map<std::string, SourceLocation>& where) {
    where[key] = e.where;
    return Expr(e, names).text();
}

/// 1 to 3 launch dimensions, each an expression checked against `names`.
std::vector<std::string> dims(const TomlNode& n, const Scope& names, std::string_view what,
                              std::map<std::string, SourceLocation>& where) {
    std::vector<std::string> out;
    for (const TomlExpression& e : n.expressions(what, 1, 3))
        out.push_back(expression(e, names,
                                 "step 1 " + std::string(what) + "[" + std::to_string(out.size()) +
                                     "]",
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
ContractArg read_arg(const TomlTable& t, const Scope& names, std::set<std::string>& seen,
                     std::map<std::string, SourceLocation>& where) {
    t.only_keys({"name", "type", "count", "value", "init", "output"}, "[[args]]");
    if (!t.contains("name") || !t.contains("type"))
        t.fail("[[args]] needs 'name' and 'type'");
    ContractArg a;
    const TomlNode name = *t.get("name");
    a.name = name.string("name");
    if (!seen.insert(a.name).second)
        name.fail("argument '" + a.name + "' appears twice");
    const TomlNode type_node = *t.get("type");
    const std::string type = type_node.string("type");
    if (type == "f32*" || type == "bf16*") {
        a.type = type == "f32*" ? ArgType::f32 : ArgType::bf16;
    } else if (type == "i32" || type == "f32") {
        a.role = ArgRole::scalar;
        a.type = type == "i32" ? ArgType::i32 : ArgType::f32;
    } else {
        type_node.fail("unknown type '" + type + "' (known: f32*, bf16*, i32, f32)");
    }
    if (a.role == ArgRole::scalar) {
        if (!t.contains("value"))
            t.fail("scalar argument '" + a.name + "' needs 'value'");
        a.value = expression(t.get("value")->expression("value"), names,
                             "argument " + a.name + " value", where);
        return a;
    }
    if (!t.contains("count"))
        t.fail("buffer argument '" + a.name + "' needs 'count' (elements)");
    a.count = expression(t.get("count")->expression("count"), names, "argument " + a.name + " count",
                         where);
    const bool output = is_output(t);
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
        a.offset = expression(t.get("value")->expression("value"), names,
                              "argument " + a.name + " offset", where);
    } else if (init != "random") {
        init_node->fail("unknown init '" + init + "' (known: random, zeros, value)");
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
    PipelineStep step;
    step.grid = dims(*lt.get("grid"), scope.names, "grid", c.where);
    step.block = dims(*lt.get("block"), scope.names, "block", c.where);
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
        ContractArg a = read_arg(t, scope.names, seen, c.where);
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

} // namespace kjit
