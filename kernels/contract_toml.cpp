#include "kernels/contract_toml.hpp"

#include <algorithm>
#include <set>

namespace kjit {

namespace {

/// 1 to 3 launch dimensions, each an expression checked against `names`.
std::vector<std::string> dims(const TomlReader& r, const toml::node& n, const Scope& names,
                              const std::string& what) {
    std::vector<std::string> out;
    const auto one = [&](const toml::node& v) { out.push_back(r.expr(v, names, what).text()); };
    if (const auto* a = n.as_array()) {
        if (a->empty() || a->size() > 3)
            r.fail(n, "'" + what + "' takes 1 to 3 expressions");
        for (const auto& v : *a)
            one(v);
    } else {
        one(n);
    }
    return out;
}

/// One [[args]] table as a contract argument.
ContractArg read_arg(const TomlReader& r, const toml::node& node, const Scope& names,
                     std::set<std::string>& seen) {
    const auto& t = *node.as_table();
    r.only_keys(t, {"name", "type", "count", "value", "init", "output"}, "[[args]]");
    if (!t.contains("name") || !t.contains("type"))
        r.fail(node, "[[args]] needs 'name' and 'type'");
    ContractArg a;
    a.name = r.string(*t.get("name"), "name");
    if (!seen.insert(a.name).second)
        r.fail(*t.get("name"), "argument '" + a.name + "' appears twice");
    const std::string type = r.string(*t.get("type"), "type");
    if (type == "f32*" || type == "bf16*") {
        a.type = type == "f32*" ? ArgType::f32 : ArgType::bf16;
    } else if (type == "i32" || type == "f32") {
        a.role = ArgRole::scalar;
        a.type = type == "i32" ? ArgType::i32 : ArgType::f32;
    } else {
        r.fail(*t.get("type"), "unknown type '" + type + "' (known: f32*, bf16*, i32, f32)");
    }
    if (a.role == ArgRole::scalar) {
        if (!t.contains("value"))
            r.fail(node, "scalar argument '" + a.name + "' needs 'value'");
        a.value = r.expr(*t.get("value"), names, "value").text();
        return a;
    }
    if (!t.contains("count"))
        r.fail(node, "buffer argument '" + a.name + "' needs 'count' (elements)");
    a.count = r.expr(*t.get("count"), names, "count").text();
    const bool output = t.contains("output") && t.get("output")->value_or(false);
    const std::string init =
        t.contains("init") ? r.string(*t.get("init"), "init") : (output ? "zeros" : "random");
    // An output given an init is read and written: a state updated in place.
    a.role = output ? (t.contains("init") ? ArgRole::in_out : ArgRole::output) : ArgRole::input;
    if (init == "zeros") {
        a.scale = "0";
    } else if (init == "value") {
        if (!t.contains("value"))
            r.fail(*t.get("init"), "init = \"value\" needs 'value'");
        a.scale = "0";
        a.offset = r.expr(*t.get("value"), names, "value").text();
    } else if (init != "random") {
        r.fail(*t.get("init"), "unknown init '" + init + "' (known: random, zeros, value)");
    }
    return a;
}

} // namespace

KernelContract read_inline_contract(const TomlReader& r, const toml::table& root,
                                    const InlineContractScope& scope) {
    KernelContract c;
    c.name = scope.kernel;
    c.shape_keys = scope.shape_keys;
    c.defines = scope.defines;
    c.launch_params = scope.launch_params;
    c.bench_shape = scope.shape;

    const auto* launch = root.get("launch");
    if (!launch)
        throw ConfigError("the sweep file needs a [launch] table (entry, grid, block)", r.file, 1,
                          1);
    const auto& lt = r.table(*launch, "launch");
    r.only_keys(lt, {"entry", "grid", "block", "smem"}, "[launch]");
    for (const char* required : {"entry", "grid", "block"})
        if (!lt.contains(required))
            r.fail(*launch, std::string("[launch] needs '") + required + "'");
    const std::string entry = r.string(*lt.get("entry"), "entry");
    PipelineStep step;
    step.grid = dims(r, *lt.get("grid"), scope.names, "grid");
    step.block = dims(r, *lt.get("block"), scope.names, "block");
    if (const auto* s = lt.get("smem"))
        step.smem = r.expr(*s, scope.names, "smem").text();

    const auto* args = root.get("args");
    if (!args || !args->is_array_of_tables())
        throw ConfigError("the sweep file needs [[args]] tables, one per kernel parameter", r.file,
                          1, 1);
    std::set<std::string> seen;
    DType dtype = DType::f32;
    bool have_dtype = false;
    for (const auto& node : *args->as_array()) {
        ContractArg a = read_arg(r, node, scope.names, seen);
        // The case's dtype is the first output's: its entry point is compiled for it.
        if (!have_dtype && is_checked(a.role)) {
            dtype = a.type == ArgType::bf16 ? DType::bf16 : DType::f32;
            have_dtype = true;
        }
        c.args.push_back(std::move(a));
    }
    if (!have_dtype)
        throw ConfigError("no argument is marked 'output = true': nothing to check", r.file, 1, 1);
    c.dtypes = {dtype};
    step.entry = {{dtype, entry}};
    c.pipeline = {std::move(step)};

    if (const auto* n = root.get("bench")) {
        const auto& t = r.table(*n, "bench");
        if (const auto* v = t.get("bytes"))
            c.bytes = r.expr(*v, scope.names, "bytes").text();
        if (const auto* v = t.get("flops"))
            c.flops = r.expr(*v, scope.names, "flops").text();
    }
    return c;
}

} // namespace kjit
