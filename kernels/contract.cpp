#include "kernels/contract.hpp"

#include "core/error.hpp"
#include "core/names.hpp"
#include "jit/compile_options.hpp"
#include "jit/define_use.hpp"
#include "jit/shape_file.hpp"
#include "jit/sources.hpp"
#include "kernels/plan.hpp"
#include "kernels/registry.hpp"
#include "kernels/shape.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace kjit {

std::string_view arg_role_name(ArgRole role) {
    switch (role) {
    case ArgRole::input:
        return "input";
    case ArgRole::output:
        return "output";
    case ArgRole::in_out:
        return "in_out";
    case ArgRole::workspace:
        return "workspace";
    case ArgRole::scalar:
        return "scalar";
    }
    return "?";
}

namespace {
constexpr ArgType kArgTypes[] = {ArgType::dtype, ArgType::f32, ArgType::bf16, ArgType::i32,
                                 ArgType::u32,   ArgType::i64, ArgType::u64,  ArgType::f64};

[[noreturn]] void fail(const KernelContract& c, const std::string& message) {
    throw ConfigError("contract " + (c.name.empty() ? std::string("(unnamed)") : c.name) + ": " +
                      message);
}

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    });
}

void check_dims(const KernelContract& c, const std::vector<std::string>& dims,
                const std::string& what) {
    if (dims.empty() || dims.size() > 3)
        fail(c, what + " takes 1 to 3 expressions, not " + std::to_string(dims.size()));
}
} // namespace

std::string_view arg_type_name(ArgType type) {
    switch (type) {
    case ArgType::dtype:
        return "dtype";
    case ArgType::f32:
        return "f32";
    case ArgType::bf16:
        return "bf16";
    case ArgType::i32:
        return "i32";
    case ArgType::u32:
        return "u32";
    case ArgType::i64:
        return "i64";
    case ArgType::u64:
        return "u64";
    case ArgType::f64:
        return "f64";
    }
    return "?";
}

ArgType parse_arg_type(std::string_view name) {
    std::string known;
    for (ArgType t : kArgTypes) {
        if (arg_type_name(t) == name)
            return t;
        known += (known.empty() ? "" : ", ") + std::string(arg_type_name(t));
    }
    throw ConfigError("unknown argument type '" + std::string(name) + "' (known: " + known + ")");
}

ContractArg input_arg(std::string name, std::string count, std::string scale, std::string offset) {
    ContractArg a;
    a.name = std::move(name);
    a.count = std::move(count);
    a.scale = std::move(scale);
    a.offset = std::move(offset);
    return a;
}

ContractArg output_arg(std::string name, std::string count, double tolerance) {
    ContractArg a;
    a.name = std::move(name);
    a.role = ArgRole::output;
    a.count = std::move(count);
    a.tolerance = tolerance;
    return a;
}

ContractArg scalar_arg(std::string name, ArgType type, std::string value) {
    ContractArg a;
    a.name = std::move(name);
    a.role = ArgRole::scalar;
    a.type = type;
    a.value = std::move(value);
    return a;
}

PipelineStep launch_step(std::map<DType, std::string> entry, std::vector<std::string> grid,
                         std::vector<std::string> block, std::vector<std::string> args,
                         std::string smem) {
    PipelineStep s;
    s.entry = std::move(entry);
    s.grid = std::move(grid);
    s.block = std::move(block);
    s.args = std::move(args);
    s.smem = std::move(smem);
    return s;
}

PipelineStep copy_step(std::string from, std::string to) {
    PipelineStep s;
    s.kind = PipelineStep::Kind::copy;
    s.from = std::move(from);
    s.to = std::move(to);
    return s;
}

bool is_generated(ArgRole role) {
    return role == ArgRole::input || role == ArgRole::in_out;
}

bool is_checked(ArgRole role) {
    return role == ArgRole::output || role == ArgRole::in_out;
}

namespace detail {

void check_contract_structure(const KernelContract& c) {
    if (!is_identifier(c.name))
        fail(c, "the name must be an identifier");
    if (c.shape_keys.empty())
        fail(c, "no shape keys");
    std::set<std::string> names{"dtype_size"};
    const auto claim = [&](const std::string& name, const std::string& what) {
        if (!is_identifier(name))
            fail(c, what + " '" + name + "' is not an identifier");
        if (!names.insert(name).second)
            fail(c, what + " '" + name +
                        "' is already the name of a shape key, define or "
                        "launch parameter (or dtype_size)");
    };
    for (const auto& k : c.shape_keys)
        claim(k, "shape key");
    for (const auto& [k, v] : c.defines) {
        claim(k, "define");
        try { // a value NVRTC would misread (a line break, a NUL)
            Defines probe;
            add_define(probe, k + "=" + v);
        } catch (const ConfigError& e) {
            fail(c, e.message);
        }
    }
    for (const auto& p : c.launch_params) {
        claim(p.name, "launch parameter");
        if (p.value.empty())
            fail(c, "launch parameter " + p.name + " has no default");
    }
    if (c.dtypes.empty())
        fail(c, "no dtypes");
    for (std::size_t i = 0; i < c.dtypes.size(); ++i)
        if (std::find(c.dtypes.begin(), c.dtypes.begin() + static_cast<long>(i), c.dtypes[i]) !=
            c.dtypes.begin() + static_cast<long>(i))
            fail(c, "dtype " + std::string(dtype_name(c.dtypes[i])) + " is listed twice");

    std::set<std::string> args;
    bool checked = false;
    for (const ContractArg& a : c.args) {
        if (!is_identifier(a.name))
            fail(c, "argument name '" + a.name + "' is not an identifier");
        if (!args.insert(a.name).second)
            fail(c, "argument '" + a.name + "' appears twice");
        const bool buffer_type =
            a.type == ArgType::dtype || a.type == ArgType::f32 || a.type == ArgType::bf16;
        if (a.role == ArgRole::scalar) {
            if (a.type == ArgType::dtype || a.type == ArgType::bf16)
                fail(c, "scalar " + a.name + " needs a scalar type (f32, i32, u32, i64, u64, f64)");
            if (a.value.empty())
                fail(c, "scalar " + a.name + " has no value");
        } else {
            if (!buffer_type)
                fail(c, "buffer " + a.name + " has type " + std::string(arg_type_name(a.type)) +
                            " (buffers: dtype, f32, bf16)");
            if (a.count.empty())
                fail(c, "buffer " + a.name + " has no count");
        }
        checked = checked || is_checked(a.role);
    }
    if (!checked)
        fail(c, "no argument is an output or in_out: nothing to check");

    const auto buffer = [&](const std::string& name, const std::string& what) {
        const auto it = std::find_if(c.args.begin(), c.args.end(),
                                     [&](const ContractArg& a) { return a.name == name; });
        if (it == c.args.end())
            fail(c, what + " names '" + name + "', which is no argument");
        if (it->role == ArgRole::scalar)
            fail(c, what + " names scalar '" + name + "', not a buffer");
        return it;
    };
    if (c.pipeline.empty())
        fail(c, "the pipeline has no step");
    bool launches = false;
    for (std::size_t s = 0; s < c.pipeline.size(); ++s) {
        const PipelineStep& step = c.pipeline[s];
        const std::string what = "step " + std::to_string(s + 1);
        if (step.kind == PipelineStep::Kind::copy) {
            const auto from = buffer(step.from, what + " (copy) 'from'");
            const auto to = buffer(step.to, what + " (copy) 'to'");
            if (from == to)
                fail(c, what + " copies " + step.from + " onto itself");
            continue;
        }
        launches = true;
        for (DType d : c.dtypes)
            if (!step.entry.contains(d) || step.entry.at(d).empty())
                fail(c, what + " has no entry point for dtype " + std::string(dtype_name(d)));
        for (const auto& [d, e] : step.entry)
            if (std::find(c.dtypes.begin(), c.dtypes.end(), d) == c.dtypes.end())
                fail(c, what + " names an entry point for dtype " + std::string(dtype_name(d)) +
                            ", which the contract does not list");
        check_dims(c, step.grid, what + " grid");
        check_dims(c, step.block, what + " block");
        for (const auto& name : step.args)
            if (!args.contains(name))
                fail(c, what + " passes '" + name + "', which is no argument");
    }
    if (!launches)
        fail(c, "the pipeline launches no kernel");
    if (std::count_if(c.pipeline.begin(), c.pipeline.end(),
                      [](const PipelineStep& s) { return s.main; }) > 1)
        fail(c, "more than one step is marked main");
    for (const PipelineStep& s : c.pipeline)
        if (s.main && s.kind == PipelineStep::Kind::copy)
            fail(c, "a copy step is marked main: reports describe a launch");
    for (const auto& p : c.preconditions)
        if (p.expr.empty())
            fail(c, "a precondition has no expression");
    if (!c.reference.empty() && !c.reference_defines.empty())
        fail(c, "a float64 reference and reference defines exclude each other: one is what "
                "`kjit check` compares with");
    for (const auto& [k, v] : c.reference_defines) {
        try {
            Defines probe;
            add_define(probe, k + "=" + v);
        } catch (const ConfigError& e) {
            fail(c, "reference defines: " + e.message);
        }
        if (!c.defines.contains(k))
            fail(c, "reference define " + k + " is none of the contract's defines");
    }
    if (!c.check_shapes.empty() && c.reference.empty() && c.reference_defines.empty())
        fail(c, "check shapes need a float64 reference or reference defines to compare with");
    for (const CheckShape& cs : c.check_shapes)
        for (DType d : cs.dtypes)
            if (std::find(c.dtypes.begin(), c.dtypes.end(), d) == c.dtypes.end())
                fail(c, "check shape " + cs.shape + " asks for dtype " +
                            std::string(dtype_name(d)) + ", which the contract does not list");
}

} // namespace detail

void validate_contract(const KernelContract& c) {
    const ContractPlanner planner(c); // the structure, then every expression
    if (!c.reference.empty() && !find_reference(c.reference))
        fail(c, "no float64 reference is registered as '" + c.reference + "'");
    const auto plan_at = [&](const std::string& shape, DType dtype, const Defines& defines,
                             const std::string& what) {
        try {
            (void)planner.plan(parse_shape(c, shape), dtype, defines);
        } catch (const ConfigError& e) {
            fail(c, what + " " + shape + " " + std::string(dtype_name(dtype)) + ": " + e.message);
        }
    };
    if (!c.bench_shape.empty())
        plan_at(c.bench_shape, c.dtypes.front(), {}, "bench shape");
    for (const auto& s : c.digest_shapes)
        for (DType d : c.dtypes)
            plan_at(s, d, {}, "digest shape");
    for (const CheckShape& cs : c.check_shapes) {
        Defines defines;
        try {
            defines = merge_defines({}, cs.defines);
        } catch (const ConfigError& e) {
            fail(c, "check shape " + cs.shape + ": " + e.message);
        }
        if (const std::string problem = self_reference_problem(c, defines); !problem.empty())
            fail(c, "check shape " + cs.shape + ": " + problem);
        for (DType d : cs.dtypes.empty() ? c.dtypes : cs.dtypes) {
            plan_at(cs.shape, d, defines, "check shape");
            if (!c.reference_defines.empty())
                plan_at(cs.shape, d, with_reference_defines(c, defines),
                        "check shape (reference defines)");
        }
    }
}

std::string self_reference_problem(const KernelContract& contract, const Defines& defines) {
    if (contract.reference_defines.empty())
        return {};
    Defines merged = contract.defines;
    for (const auto& [k, v] : defines)
        merged[k] = v;
    for (const auto& [k, v] : contract.reference_defines)
        if (merged[k] != v)
            return {};
    // Most often a misspelt knob: the case meant to set a define the contract has.
    std::vector<std::string> known;
    for (const Defines* d : {&contract.defines, &contract.reference_defines})
        for (const auto& [k, _] : *d)
            if (std::find(known.begin(), known.end(), k) == known.end())
                known.push_back(k);
    std::string misspelt;
    for (const auto& [k, _] : defines)
        if (std::find(known.begin(), known.end(), k) == known.end())
            if (const auto near = nearest(k, known); !near.empty()) {
                misspelt = "its define " + k + " is none of the contract's" + did_you_mean(near) +
                           " As written, ";
                break;
            }
    return misspelt + (misspelt.empty() ? "its" : "the case's") +
           " defines already hold the reference defines (" +
           defines_text(contract.reference_defines) +
           "), so kjit check would compare the pipeline with itself and pass any kernel; give "
           "the case a define that differs";
}

Defines with_reference_defines(const KernelContract& contract, Defines defines) {
    for (const auto& [k, v] : contract.reference_defines)
        defines[k] = v;
    return defines;
}

std::string contract_text(const KernelContract& c) {
    std::ostringstream os;
    os << "name " << c.name << "\nsource " << c.source_name() << "\nshape";
    for (const auto& k : c.shape_keys)
        os << ' ' << k;
    os << "\ndtypes";
    for (DType d : c.dtypes)
        os << ' ' << dtype_name(d);
    os << "\ndefines " << defines_text(c.defines);
    for (const auto& p : c.launch_params)
        os << "\nlaunch_param " << p.name << " = " << p.value;
    for (const auto& a : c.args)
        os << "\narg " << a.name << ' ' << arg_role_name(a.role) << ' ' << arg_type_name(a.type)
           << " count=" << a.count << " value=" << a.value << " scale=" << a.scale
           << " offset=" << a.offset << " tolerance=" << a.tolerance;
    for (const auto& p : c.preconditions)
        os << "\nprecondition " << p.expr << " : " << p.message;
    for (const auto& s : c.pipeline) {
        if (s.kind == PipelineStep::Kind::copy) {
            os << "\ncopy " << s.from << " -> " << s.to;
            continue;
        }
        os << "\nlaunch";
        for (const auto& [d, e] : s.entry)
            os << ' ' << dtype_name(d) << '=' << e;
        for (const auto* dims : {&s.grid, &s.block}) {
            os << (dims == &s.grid ? " grid" : " block");
            for (const auto& g : *dims)
                os << " [" << g << ']';
        }
        os << " smem " << s.smem << (s.main ? " main" : "") << " args";
        for (const auto& a : s.args)
            os << ' ' << a;
    }
    os << "\nbytes " << c.bytes << "\nflops " << c.flops << "\nreference " << c.reference
       << "\nreference_defines " << defines_text(c.reference_defines) << "\nbench "
       << c.bench_shape;
    for (const auto& s : c.check_shapes) {
        os << "\ncheck " << s.shape;
        for (DType d : s.dtypes)
            os << ' ' << dtype_name(d);
        for (const auto& d : s.defines)
            os << ' ' << d;
    }
    for (const auto& s : c.digest_shapes)
        os << "\ndigest " << s;
    os << '\n';
    return os.str();
}

namespace {

/// unread_define_diagnostics for `defines` of the contract, placed by its `where` entries
/// `prefix + name`, as the kernel "label".
std::vector<Diagnostic> unread_placed(const KernelContract& contract, const SourceSet& sources,
                                      const std::string& label,
                                      const std::map<std::string, std::string>& defines,
                                      const std::string& prefix) {
    const SourceFile* kernel = sources.find(contract.source_name() + ".cu");
    if (!kernel || defines.empty())
        return {};
    std::map<std::string, SourceLocation> places;
    for (const auto& [name, _] : defines)
        if (const auto at = contract.where.find(prefix + name); at != contract.where.end())
            places[name] = at->second;
    return unread_define_diagnostics(sources, *kernel, label, places, defines, Severity::error);
}

} // namespace

std::vector<Diagnostic> unread_contract_defines(const KernelContract& contract,
                                                const SourceSet& sources) {
    return unread_placed(contract, sources, contract.name + " (contract)", contract.defines,
                         "define ");
}

std::vector<Diagnostic> unread_check_defines(const KernelContract& contract,
                                             const SourceSet& sources) {
    std::vector<Diagnostic> out;
    for (std::size_t k = 0; k < contract.check_shapes.size(); ++k) {
        Defines defines = merge_defines({}, contract.check_shapes[k].defines);
        std::erase_if(defines, [&](const auto& d) { return contract.defines.contains(d.first); });
        const std::string case_name = "[[check]] " + std::to_string(k + 1);
        for (Diagnostic& d : unread_placed(contract, sources,
                                           contract.name + " (" + case_name + ")", defines,
                                           case_name + " define "))
            out.push_back(std::move(d));
    }
    return out;
}

std::vector<std::string> KernelContract::name_expressions(std::optional<DType> only) const {
    std::vector<std::string> out;
    for (const PipelineStep& step : pipeline)
        for (const auto& [dtype, entry] : step.entry) {
            if (only && dtype != *only)
                continue;
            const bool exported = std::all_of(entry.begin(), entry.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
            });
            if (!exported && std::find(out.begin(), out.end(), entry) == out.end())
                out.push_back(entry);
        }
    return out;
}

} // namespace kjit
