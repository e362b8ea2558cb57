#include "kernels/plan.hpp"

#include "core/error.hpp"
#include "jit/define_use.hpp"
#include "kernels/expr.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>

namespace kjit {

namespace {

/// One token per list of parameter sizes and kinds: the first launch with a token checks it.
const void* signature_token(const std::string& sizes) {
    static std::mutex m;
    static std::set<std::string> interned;
    std::lock_guard lock(m);
    return &*interned.insert(sizes).first;
}

/// A numeric define value, or nothing.
std::optional<double> number(const std::string& text) {
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (text.empty() || !end || *end != '\0')
        return std::nullopt;
    return d;
}

std::string format_value(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15)
        return std::to_string(static_cast<long long>(v));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

template <class T> void store_scalar(ScalarSpec& s, T v) {
    std::memcpy(s.bytes.data(), &v, sizeof v);
    s.size = sizeof v;
    s.value = static_cast<double>(v);
}

} // namespace

struct ContractPlanner::Impl {
    KernelContract contract;
    Scope names; ///< every name an expression may read
    std::vector<std::string> numeric_defines;
    std::vector<Expr> launch_defaults, preconditions;
    struct Arg {
        std::optional<Expr> count, value, scale, offset;
    };
    std::vector<Arg> args;
    struct Step {
        std::vector<Expr> grid, block;
        std::optional<Expr> smem;
        std::vector<ParamRef> params;
        std::size_t from = 0, to = 0;
    };
    std::vector<Step> steps;
    std::optional<Expr> bytes, flops;

    Expr compile(const std::string& text, const std::string& what, const Scope& scope) const {
        const auto at = contract.where.find(what);
        // A define whose value is no number is left out of the scope: said as such where an
        // expression reads it, not as an unknown name.
        for (const auto& [k, v] : contract.defines)
            if (!scope.contains(k) && names_identifier(text, k)) {
                const auto d = contract.where.find("define " + k);
                const std::string message =
                    "contract " + contract.name + ", " + what + ": '" + text + "' reads define " +
                    k + " = '" + v + "'" +
                    (d == contract.where.end() ? ""
                                               : " (line " + std::to_string(d->second.line) + ")") +
                    ", which is not a number: the contract's expressions read defines as numbers";
                if (at == contract.where.end())
                    throw ConfigError(message);
                throw ConfigError(message, at->second);
            }
        try {
            if (at == contract.where.end())
                return Expr(text, scope);
            return Expr(text, scope, at->second.path, at->second.line, at->second.column);
        } catch (const ConfigError& e) {
            throw ConfigError("contract " + contract.name + ", " + what + ": " + e.message, e.file,
                              e.line, e.column);
        }
    }
    Expr compile(const std::string& text, const std::string& what) const {
        return compile(text, what, names);
    }
    [[noreturn]] void fail(const std::string& message) const {
        throw ConfigError(contract.name + ": " + message);
    }
    /// fail(), at the contract's `key` (KernelContract::where) when it has one.
    [[noreturn]] void fail_at(const std::string& key, const std::string& message) const {
        if (const auto w = contract.where.find(key); w != contract.where.end())
            throw ConfigError(contract.name + ": " + message, w->second);
        fail(message);
    }
    /// The values every expression reads at a case; fills `resolved` with the launch values.
    Scope case_scope(const ShapeValues& shape, DType dtype, const Defines& merged,
                     const LaunchValues& launch, LaunchValues& resolved) const;
};

ContractPlanner::ContractPlanner(KernelContract contract) : impl_(std::make_unique<Impl>()) {
    detail::check_contract_structure(contract);
    Impl& m = *impl_;
    m.contract = std::move(contract);
    const KernelContract& c = m.contract;
    for (const auto& k : c.shape_keys)
        m.names[k] = 1;
    for (const auto& [k, v] : c.defines)
        if (const auto d = number(v)) {
            m.names[k] = *d;
            m.numeric_defines.push_back(k);
        }
    m.names["dtype_size"] = 4;
    // Launch parameter defaults read shapes and defines only; every other expression reads them.
    const Scope base = m.names;
    for (const auto& p : c.launch_params) {
        m.launch_defaults.push_back(m.compile(p.value, "launch parameter " + p.name, base));
        m.names[p.name] = 1;
    }
    for (const auto& p : c.preconditions)
        m.preconditions.push_back(
            m.compile(p.expr, "precondition " + std::to_string(m.preconditions.size() + 1)));
    for (const ContractArg& a : c.args) {
        Impl::Arg e;
        const std::string what = "argument " + a.name;
        if (a.role == ArgRole::scalar) {
            e.value = m.compile(a.value, what + " value");
        } else {
            e.count = m.compile(a.count, what + " count");
            if (is_generated(a.role)) {
                e.scale = m.compile(a.scale, what + " scale");
                e.offset = m.compile(a.offset, what + " offset");
            }
        }
        m.args.push_back(std::move(e));
    }
    // Buffers and scalars are numbered apart, each in the contract's order.
    std::vector<ParamRef> refs;
    std::size_t buffers = 0, scalars = 0;
    for (const ContractArg& a : c.args)
        refs.push_back(a.role == ArgRole::scalar ? ParamRef{true, scalars++}
                                                 : ParamRef{false, buffers++});
    const auto ref_of = [&](const std::string& name) {
        for (std::size_t i = 0; i < c.args.size(); ++i)
            if (c.args[i].name == name)
                return refs[i];
        return ParamRef{};
    };
    for (std::size_t s = 0; s < c.pipeline.size(); ++s) {
        const PipelineStep& step = c.pipeline[s];
        const std::string what = "step " + std::to_string(s + 1);
        Impl::Step e;
        if (step.kind == PipelineStep::Kind::copy) {
            e.from = ref_of(step.from).index;
            e.to = ref_of(step.to).index;
        } else {
            for (const auto& g : step.grid)
                e.grid.push_back(
                    m.compile(g, what + " grid[" + std::to_string(e.grid.size()) + "]"));
            for (const auto& b : step.block)
                e.block.push_back(
                    m.compile(b, what + " block[" + std::to_string(e.block.size()) + "]"));
            e.smem = m.compile(step.smem.empty() ? "0" : step.smem, what + " smem");
            if (step.args.empty())
                e.params = refs;
            else
                for (const auto& name : step.args)
                    e.params.push_back(ref_of(name));
        }
        m.steps.push_back(std::move(e));
    }
    if (!c.bytes.empty())
        m.bytes = m.compile(c.bytes, "bytes");
    if (!c.flops.empty())
        m.flops = m.compile(c.flops, "flops");
}

ContractPlanner::ContractPlanner(ContractPlanner&&) noexcept = default;
ContractPlanner& ContractPlanner::operator=(ContractPlanner&&) noexcept = default;
ContractPlanner::~ContractPlanner() = default;

const KernelContract& ContractPlanner::contract() const {
    return impl_->contract;
}

Scope ContractPlanner::Impl::case_scope(const ShapeValues& shape, DType dtype,
                                        const Defines& merged, const LaunchValues& launch,
                                        LaunchValues& resolved) const {
    const KernelContract& c = contract;
    if (std::find(c.dtypes.begin(), c.dtypes.end(), dtype) == c.dtypes.end()) {
        std::string known;
        for (DType d : c.dtypes)
            known += (known.empty() ? "" : ", ") + std::string(dtype_name(d));
        fail("no dtype " + std::string(dtype_name(dtype)) + " (dtypes: " + known + ")");
    }
    Scope scope;
    for (const auto& k : c.shape_keys) {
        const auto it = shape.find(k);
        if (it == shape.end())
            fail("the shape has no '" + k + "'");
        scope[k] = static_cast<double>(it->second);
    }
    for (const auto& k : numeric_defines) {
        const auto d = number(merged.at(k));
        if (!d)
            fail("define " + k + "=" + merged.at(k) +
                 " is not a number, and the contract's expressions read it");
        scope[k] = *d;
    }
    scope["dtype_size"] = static_cast<double>(dtype_size(dtype));
    for (const auto& given : launch)
        if (std::none_of(c.launch_params.begin(), c.launch_params.end(),
                         [&](const LaunchParam& lp) { return lp.name == given.first; })) {
            std::string known;
            for (const auto& lp : c.launch_params)
                known += (known.empty() ? "" : ", ") + lp.name;
            fail("no launch parameter '" + given.first +
                 "' (known: " + (known.empty() ? "none" : known) + ")");
        }
    for (std::size_t i = 0; i < c.launch_params.size(); ++i) {
        const std::string& name = c.launch_params[i].name;
        const auto it = launch.find(name);
        resolved[name] = it != launch.end() ? it->second : launch_defaults[i].eval_int(scope);
        scope[name] = static_cast<double>(resolved[name]);
    }
    return scope;
}

LaunchValues ContractPlanner::launch_values(const ShapeValues& shape, DType dtype,
                                            const Defines& defines,
                                            const LaunchValues& launch) const {
    Defines merged = impl_->contract.defines;
    for (const auto& [k, v] : defines)
        merged[k] = v;
    LaunchValues resolved;
    (void)impl_->case_scope(shape, dtype, merged, launch, resolved);
    return resolved;
}

CasePlan ContractPlanner::plan(const ShapeValues& shape, DType dtype, const Defines& defines,
                               const LaunchValues& launch) const {
    const Impl& m = *impl_;
    const KernelContract& c = m.contract;
    CasePlan p;
    p.kernel = c.name;
    p.source = c.source_name();
    p.reference = c.reference;
    p.dtype = dtype;
    p.defines = c.defines;
    for (const auto& [k, v] : defines)
        p.defines[k] = v;
    const Scope scope = m.case_scope(shape, dtype, p.defines, launch, p.launch);
    for (const auto& k : c.shape_keys)
        p.shape[k] = shape.at(k);
    for (std::size_t i = 0; i < m.preconditions.size(); ++i)
        if (m.preconditions[i].eval(scope) == 0.0) {
            std::string msg = c.preconditions[i].message.empty() ? c.preconditions[i].expr
                                                                 : c.preconditions[i].message;
            for (const auto& [name, value] : scope)
                for (std::size_t at; (at = msg.find("{" + name + "}")) != std::string::npos;)
                    msg.replace(at, name.size() + 2, format_value(value));
            throw PreconditionError(c.name + ": " + msg);
        }

    for (std::size_t i = 0; i < c.args.size(); ++i) {
        const ContractArg& a = c.args[i];
        const Impl::Arg& e = m.args[i];
        if (a.role == ArgRole::scalar) {
            ScalarSpec s;
            s.name = a.name;
            s.type = a.type;
            const double v = e.value->eval(scope);
            const auto whole = [&](double lo, double hi) {
                const long long n = e.value->eval_int(scope);
                if (static_cast<double>(n) < lo || static_cast<double>(n) > hi)
                    m.fail_at("argument " + a.name + " value",
                              "scalar " + a.name + " = " + format_value(v) + " does not fit " +
                                  std::string(arg_type_name(a.type)));
                return n;
            };
            switch (a.type) {
            case ArgType::i32:
                store_scalar(s, static_cast<std::int32_t>(whole(INT32_MIN, INT32_MAX)));
                break;
            case ArgType::u32:
                store_scalar(s, static_cast<std::uint32_t>(whole(0, UINT32_MAX)));
                break;
            case ArgType::i64:
                store_scalar(s, static_cast<std::int64_t>(whole(-9.2e18, 9.2e18)));
                break;
            case ArgType::u64:
                store_scalar(s, static_cast<std::uint64_t>(whole(0, 1.8e19)));
                break;
            case ArgType::f32:
                store_scalar(s, static_cast<float>(v));
                break;
            default:
                store_scalar(s, v);
                break;
            }
            p.scalars.push_back(std::move(s));
            continue;
        }
        BufferSpec b;
        b.name = a.name;
        b.role = a.role;
        b.dtype = a.type == ArgType::dtype  ? dtype
                  : a.type == ArgType::bf16 ? DType::bf16
                                            : DType::f32;
        const long long n = e.count->eval_int(scope);
        if (n < 0)
            throw ConfigError(c.name + ": buffer " + a.name + ": count '" + a.count + "' = " +
                                  std::to_string(n) + " is negative",
                              e.count->where());
        // Its bytes must fit 63 bits (no device holds half as many).
        if (n > (std::numeric_limits<long long>::max)() / 8)
            throw ConfigError(c.name + ": buffer " + a.name + ": count '" + a.count + "' = " +
                                  std::to_string(n) + " elements is more than a buffer can hold",
                              e.count->where());
        b.count = static_cast<std::size_t>(n);
        if (e.scale) {
            b.scale = static_cast<float>(e.scale->eval(scope));
            b.offset = static_cast<float>(e.offset->eval(scope));
        }
        b.tolerance = a.tolerance;
        if (is_generated(a.role))
            p.inputs.push_back(p.buffers.size());
        if (is_checked(a.role))
            p.outputs.push_back(p.buffers.size());
        p.buffers.push_back(std::move(b));
    }

    // Every dimension within what every CUDA device accepts: grid.x up to 2^31 - 1, grid.y
    // and grid.z up to 65535, a block of at most 1024 threads (z at most 64).
    const auto dim3_of = [&](const std::vector<Expr>& exprs, const char* what,
                             const std::array<long long, 3>& limits) {
        Dim3 d;
        unsigned* f[3] = {&d.x, &d.y, &d.z};
        for (std::size_t i = 0; i < exprs.size(); ++i) {
            const long long v = exprs[i].eval_int(scope);
            if (v <= 0 || v > limits[i])
                throw ConfigError(c.name + ": " + what + "." + "xyz"[i] + " '" + exprs[i].text() +
                                      "' = " + std::to_string(v) + " is not a valid launch " +
                                      "dimension (1.." + std::to_string(limits[i]) + ")",
                                  exprs[i].where());
            *f[i] = static_cast<unsigned>(v);
        }
        return d;
    };
    for (std::size_t s = 0; s < c.pipeline.size(); ++s) {
        const PipelineStep& step = c.pipeline[s];
        const Impl::Step& e = m.steps[s];
        StepPlan sp;
        sp.kind = step.kind;
        if (step.kind == PipelineStep::Kind::copy) {
            sp.from = e.from;
            sp.to = e.to;
            if (p.buffers[sp.from].bytes() != p.buffers[sp.to].bytes())
                m.fail("step " + std::to_string(s + 1) + " copies " + step.from + " (" +
                       std::to_string(p.buffers[sp.from].bytes()) + " bytes) into " + step.to +
                       " (" + std::to_string(p.buffers[sp.to].bytes()) + " bytes)");
            p.steps.push_back(std::move(sp));
            continue;
        }
        sp.entry = step.entry.at(dtype);
        sp.main = step.main;
        sp.grid = dim3_of(e.grid, "grid", {2147483647LL, 65535, 65535});
        sp.block = dim3_of(e.block, "block", {1024, 1024, 64});
        if (sp.block.volume() > 1024)
            throw ConfigError(c.name + ": block " + sp.block.str() + " has " +
                                  std::to_string(sp.block.volume()) +
                                  " threads; a block has at most 1024",
                              e.block.front().where());
        // The driver takes dynamic shared memory as an int; the device's own limit is checked
        // at the first launch.
        const long long smem = e.smem->eval_int(scope);
        if (smem < 0 || smem > 2147483647LL)
            throw ConfigError(c.name + ": step " + std::to_string(s + 1) + ": smem '" +
                                  step.smem + "' = " + std::to_string(smem) +
                                  " is out of range (0..2147483647 bytes)",
                              e.smem->where());
        sp.smem = static_cast<unsigned>(smem);
        sp.params = e.params;
        std::string sizes;
        for (const ParamRef& r : sp.params)
            sizes += std::to_string(r.scalar ? p.scalars[r.index].size : sizeof(CUdeviceptr)) +
                     static_cast<char>('0' + static_cast<int>(param_kind(p, r))) + ",";
        sp.signature = signature_token(sizes);
        p.steps.push_back(std::move(sp));
    }
    p.bytes = m.bytes ? m.bytes->eval(scope) : 0;
    p.flops = m.flops ? m.flops->eval(scope) : 0;
    return p;
}

CasePlan buffer_capacity(std::span<const CasePlan> plans) {
    CasePlan capacity = plans.front();
    for (const CasePlan& p : plans)
        for (std::size_t b = 0; b < capacity.buffers.size(); ++b)
            capacity.buffers[b].count = std::max(capacity.buffers[b].count, p.buffers[b].count);
    return capacity;
}

CasePlan plan_case(const KernelContract& contract, const ShapeValues& shape, DType dtype,
                   const Defines& defines, const LaunchValues& launch) {
    return ContractPlanner(contract).plan(shape, dtype, defines, launch);
}

ArgKind param_kind(const CasePlan& plan, const ParamRef& ref) {
    if (!ref.scalar)
        return ArgKind::pointer; // a CUdeviceptr
    switch (plan.scalars[ref.index].type) {
    case ArgType::f32:
    case ArgType::f64:
        return ArgKind::floating;
    case ArgType::i32:
    case ArgType::u32:
    case ArgType::i64:
    case ArgType::u64:
        return ArgKind::integer;
    case ArgType::dtype:
    case ArgType::bf16:
        break;
    }
    return ArgKind::other; // checked by size alone
}

} // namespace kjit
