#include "tuning/kernel_cases.hpp"

#include "jit/compile_options.hpp"
#include "runtime/buffer.hpp"
#include "tuning/numeric.hpp"
#include "tuning/reference.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kjit {

double output_tolerance(const BufferSpec& output) {
    if (output.tolerance > 0)
        return output.tolerance;
    return output.dtype == DType::bf16 ? 1e-2 : 1e-6;
}

namespace {

/// Define `name` as an integer of at least `min`; ConfigError when it is unset or not one.
int define_int(const Defines& defines, const std::string& name, int min = 1) {
    const auto it = defines.find(name);
    if (it == defines.end())
        throw ConfigError("the launch needs define " + name + " and it is not set");
    int v = 0;
    const auto [end, ec] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || end != it->second.data() + it->second.size() || v < min)
        throw ConfigError("define " + name + "=" + it->second + " must be an integer of at least " +
                          std::to_string(min));
    return v;
}

unsigned cdiv(std::int64_t a, std::int64_t b) {
    return static_cast<unsigned>((a + b - 1) / b);
}

/// Shape entry `key` as an int (parse_shape keeps every value within 32 bits).
int dim(const ShapeValues& s, const std::string& key) {
    return static_cast<int>(s.at(key));
}

std::size_t count(const ShapeValues& s, std::initializer_list<const char*> keys) {
    std::size_t n = 1;
    for (const char* k : keys)
        n *= static_cast<std::size_t>(s.at(k));
    return n;
}

KernelCase rms_norm_row() {
    KernelCase kc;
    kc.kernel = "rms_norm";
    kc.shape_keys = {"rows", "n"};
    kc.dtypes = {DType::f32, DType::bf16};
    kc.defines = {{"RMS_BLOCK", "256"}};
    kc.bench_shape = "rows=8192,n=7168";
    // Decode (one row), a width that is no multiple of any block, and a prefill batch.
    kc.digest_shapes = {"rows=1,n=7168", "rows=333,n=1000", "rows=4096,n=7168"};
    kc.layout = [](const ShapeValues& s, DType dtype) {
        const std::size_t rows = count(s, {"rows"}), n = count(s, {"n"});
        CaseLayout l;
        l.entry = dtype == DType::bf16 ? "rms_norm_bf16" : "rms_norm_f32";
        l.inputs = {{"x", dtype, rows * n}, {"w", dtype, n}};
        l.outputs = {{"y", dtype, rows * n}};
        // Read x and w, write y; per element one FMA for the sum of squares and two multiplies.
        l.work.bytes = static_cast<double>((2 * rows * n + n) * dtype_size(dtype));
        l.work.flops = 4.0 * static_cast<double>(rows * n);
        return l;
    };
    kc.launch = [](const Function& fn, const Defines& defines, const ShapeValues& s,
                   std::span<const CUdeviceptr> in, std::span<const CUdeviceptr> out,
                   CUstream stream) {
        LaunchConfig config;
        config.grid.x = static_cast<unsigned>(dim(s, "rows")); // one block per row
        config.block.x = static_cast<unsigned>(define_int(defines, "RMS_BLOCK"));
        config.stream = stream;
        fn.launch(config, in[0], in[1], out[0], dim(s, "rows"), dim(s, "n"), kRmsNormEps);
        return config;
    };
    kc.reference = [](const ShapeValues& s, const Defines&, std::span<const std::vector<double>> in,
                      std::span<std::vector<double>> out) {
        rms_norm_reference(in[0], in[1], out[0], dim(s, "rows"), dim(s, "n"), kRmsNormEps);
    };
    return kc;
}

KernelCase conv1d_row() {
    KernelCase kc;
    kc.kernel = "conv1d";
    kc.shape_keys = {"b", "c", "t"};
    kc.dtypes = {DType::f32, DType::bf16};
    kc.defines = {{"CONV_TILE", "8"}, {"CONV_BLOCK", "256"}, {"CONV_SILU", "1"}};
    kc.bench_shape = "b=8,c=4096,t=1300";
    // One tile, a length that is no multiple of the tile (the element-by-element path), and
    // the production length at fewer channels.
    kc.digest_shapes = {"b=1,c=4,t=8", "b=2,c=64,t=37", "b=2,c=256,t=1300"};
    kc.layout = [](const ShapeValues& s, DType dtype) {
        const std::size_t xs = count(s, {"b", "c", "t"}), c = count(s, {"c"}),
                          states = count(s, {"b", "c"}) * 3;
        CaseLayout l;
        l.entry = dtype == DType::bf16 ? "conv1d_bf16" : "conv1d_f32";
        l.inputs = {
            {"x", dtype, xs}, {"w", dtype, c * 4}, {"bias", dtype, c}, {"state_in", dtype, states}};
        l.outputs = {{"y", dtype, xs}, {"state_out", dtype, states}};
        // Read x, w, bias and the carry-in, write y and the carry-out; four FMAs per output
        // (the activation is not counted).
        l.work.bytes = static_cast<double>((2 * xs + 5 * c + 2 * states) * dtype_size(dtype));
        l.work.flops = 8.0 * static_cast<double>(xs);
        return l;
    };
    kc.launch = [](const Function& fn, const Defines& defines, const ShapeValues& s,
                   std::span<const CUdeviceptr> in, std::span<const CUdeviceptr> out,
                   CUstream stream) {
        const int tile = define_int(defines, "CONV_TILE"),
                  block = define_int(defines, "CONV_BLOCK");
        // One thread per tile of CONV_TILE time steps of one (batch, channel) row.
        const std::int64_t threads =
            static_cast<std::int64_t>(count(s, {"b", "c"})) * cdiv(dim(s, "t"), tile);
        LaunchConfig config;
        config.grid.x = cdiv(threads, block);
        config.block.x = static_cast<unsigned>(block);
        config.stream = stream;
        fn.launch(config, in[0], in[1], in[2], in[3], out[0], out[1], dim(s, "b"), dim(s, "c"),
                  dim(s, "t"));
        return config;
    };
    kc.reference = [](const ShapeValues& s, const Defines& defines,
                      std::span<const std::vector<double>> in, std::span<std::vector<double>> out) {
        conv1d_reference(in[0], in[1], in[2], in[3], out[0], out[1], dim(s, "b"), dim(s, "c"),
                         dim(s, "t"), define_int(defines, "CONV_SILU", 0) != 0);
    };
    return kc;
}

/// The attention scale the delta rule is launched with, as the fp32 the kernel receives.
float delta_rule_scale(int dk) {
    return static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));
}

KernelCase delta_rule_row() {
    KernelCase kc;
    kc.kernel = "delta_rule";
    kc.shape_keys = {"b", "h", "dk", "dv"};
    kc.dtypes = {DType::f32};
    kc.defines = {{"DR_BV", "32"}, {"DR_KSPLIT", "4"}, {"DR_MAX_DK", "128"}};
    kc.bench_shape = "b=1,h=32,dk=128,dv=128";
    // Production decode, and a value width no tile divides at a smaller key width.
    kc.digest_shapes = {"b=1,h=32,dk=128,dv=128", "b=2,h=3,dk=64,dv=100"};
    kc.layout = [](const ShapeValues& s, DType dtype) {
        const std::size_t heads = count(s, {"b", "h"}), dk = count(s, {"dk"}),
                          dv = count(s, {"dv"}), state = heads * dk * dv;
        CaseLayout l;
        l.entry = "delta_rule_decode";
        // Keys of norm about 1/sqrt(3) (as normalised keys are) keep beta k^T k below 1, so the
        // update contracts; g < 0 is a decay; beta is a gate in [0, 1).
        l.inputs = {{"q", dtype, heads * dk},
                    {"k", dtype, heads * dk, 1.0f / std::sqrt(static_cast<float>(dk))},
                    {"v", dtype, heads * dv},
                    {"g", dtype, heads, 0.05f, -0.1f},
                    {"beta", dtype, heads, 0.5f, 0.5f},
                    {"state_in", dtype, state}};
        // The kernel updates the state in place: each launch first copies state_in into the
        // state output, so repeated launches (bench, graphs) all start from the same state.
        l.outputs = {{.name = "o", .dtype = dtype, .count = heads * dv, .tolerance = 1e-5},
                     {"state", dtype, state}};
        // The restore copy (read + write) and the kernel's read + write of the state, plus the
        // vectors; per state element a multiply (decay), an FMA each for S^T k, the update
        // and S^T q, and the q * scale multiply.
        l.work.bytes = static_cast<double>(
            (4 * state + 2 * heads * dk + 2 * heads * dv + 2 * heads) * dtype_size(dtype));
        l.work.flops = 8.0 * static_cast<double>(state);
        return l;
    };
    kc.launch = [](const Function& fn, const Defines& defines, const ShapeValues& s,
                   std::span<const CUdeviceptr> in, std::span<const CUdeviceptr> out,
                   CUstream stream) {
        const int bv = define_int(defines, "DR_BV"), ksplit = define_int(defines, "DR_KSPLIT"),
                  max_dk = define_int(defines, "DR_MAX_DK");
        const int dk = dim(s, "dk"), dv = dim(s, "dv");
        // Each thread holds dk / DR_KSPLIT rows in a register array of DR_MAX_DK / DR_KSPLIT:
        // any other dk would drop rows silently.
        if (dk % ksplit != 0 || dk > max_dk)
            throw ConfigError("delta_rule: dk=" + std::to_string(dk) + " must be a multiple of " +
                              "DR_KSPLIT=" + std::to_string(ksplit) +
                              " and at most DR_MAX_DK=" + std::to_string(max_dk));
        const std::size_t state_bytes = count(s, {"b", "h", "dk", "dv"}) * sizeof(float);
        check(driver().cuMemcpyDtoDAsync(out[1], in[5], state_bytes, stream), "cuMemcpyDtoDAsync",
              "delta_rule state_in -> state");
        LaunchConfig config;
        config.grid = {cdiv(dv, bv), static_cast<unsigned>(count(s, {"b", "h"})), 1};
        config.block = {static_cast<unsigned>(bv), static_cast<unsigned>(ksplit), 1};
        config.stream = stream;
        fn.launch(config, in[0], in[1], in[2], in[3], in[4], out[1], out[0], dk, dv,
                  delta_rule_scale(dk));
        return config;
    };
    kc.reference = [](const ShapeValues& s, const Defines&, std::span<const std::vector<double>> in,
                      std::span<std::vector<double>> out) {
        out[1] = in[5];
        delta_rule_reference(in[0], in[1], in[2], in[3], in[4], out[1], out[0],
                             static_cast<int>(count(s, {"b", "h"})), dim(s, "dk"), dim(s, "dv"),
                             delta_rule_scale(dim(s, "dk")));
    };
    return kc;
}

/// Writes `v`, rounded to the buffer's dtype, into element `i`.
void store(HostBuffer& b, std::size_t i, float v) {
    if (b.dtype == DType::bf16) {
        const std::uint16_t bits = to_bf16(v);
        std::memcpy(b.bytes.data() + 2 * i, &bits, 2);
    } else {
        std::memcpy(b.bytes.data() + 4 * i, &v, 4);
    }
}

} // namespace

const std::vector<KernelCase>& kernel_cases() {
    static const std::vector<KernelCase> table = {rms_norm_row(), conv1d_row(), delta_rule_row()};
    return table;
}

const KernelCase& kernel_case(std::string_view kernel) {
    std::string known;
    for (const KernelCase& kc : kernel_cases()) {
        if (kc.kernel == kernel)
            return kc;
        known += (known.empty() ? "" : ", ") + kc.kernel;
    }
    throw NotFoundError("no bench or digest case for kernel '" + std::string(kernel) +
                        "' (known: " + known + ")");
}

ShapeValues parse_shape(const KernelCase& kc, std::string_view text) {
    const std::string shown(text);
    std::string keys;
    for (const auto& k : kc.shape_keys)
        keys += (keys.empty() ? "" : ",") + k + "=N";
    ShapeValues out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string_view::npos)
            comma = text.size();
        std::string_view part = text.substr(pos, comma - pos);
        while (!part.empty() && part.front() == ' ')
            part.remove_prefix(1);
        while (!part.empty() && part.back() == ' ')
            part.remove_suffix(1);
        const std::size_t eq = part.find('=');
        const std::string key(part.substr(0, eq));
        if (eq == std::string_view::npos || key.empty())
            throw ConfigError("bad shape '" + shown + "' for " + kc.kernel + ": expected " + keys);
        if (std::find(kc.shape_keys.begin(), kc.shape_keys.end(), key) == kc.shape_keys.end())
            throw ConfigError("bad shape '" + shown + "': " + kc.kernel + " has no shape key '" +
                              key + "' (expected " + keys + ")");
        const std::string_view value = part.substr(eq + 1);
        std::int64_t v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size() || v <= 0 || v > INT32_MAX)
            throw ConfigError("bad shape '" + shown + "': " + key +
                              " must be a positive 32-bit "
                              "integer, not '" +
                              std::string(value) + "'");
        if (!out.emplace(key, v).second)
            throw ConfigError("bad shape '" + shown + "': " + key + " is given twice");
        pos = comma + 1;
    }
    for (const auto& k : kc.shape_keys)
        if (!out.contains(k))
            throw ConfigError("bad shape '" + shown + "': " + k + " is missing (expected " + keys +
                              ")");
    return out;
}

std::string shape_text(const KernelCase& kc, const ShapeValues& shape) {
    std::string out;
    for (const auto& k : kc.shape_keys)
        out += (out.empty() ? "" : ",") + k + "=" + std::to_string(shape.at(k));
    return out;
}

std::vector<std::string> split_shapes(std::string_view text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t semi = text.find(';', pos);
        if (semi == std::string_view::npos)
            semi = text.size();
        if (semi > pos)
            out.emplace_back(text.substr(pos, semi - pos));
        pos = semi + 1;
    }
    return out;
}

Defines merge_defines(Defines base, std::span<const std::string> overrides) {
    for (const std::string& d : overrides)
        add_define(base, d);
    return base;
}

std::string defines_text(const Defines& defines) {
    CompileOptions o;
    o.defines = defines;
    return o.defines_text();
}

KernelSpec case_spec(const KernelCase& kc, const Defines& defines) {
    KernelSpec spec;
    spec.name = kc.kernel;
    for (const auto& [k, v] : defines)
        spec.name += "/" + k + "=" + v;
    spec.source = kc.kernel;
    spec.defines = defines;
    return spec;
}

std::vector<PreparedArm> prepare_arms(Engine& engine, const KernelCase& kc,
                                      const std::vector<Defines>& define_sets,
                                      const Device& device) {
    std::vector<KernelSpec> specs;
    for (const Defines& d : define_sets)
        specs.push_back(case_spec(kc, d));
    const std::vector<PrepareRow> rows = engine.prepare({}, specs);
    const std::string source_hash =
        engine.sources().current()->kernel(kc.kernel).hash.hex().substr(0, 12);
    std::vector<PreparedArm> arms;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].error)
            std::rethrow_exception(rows[i].error);
        PreparedArm arm;
        arm.engine = &engine;
        arm.spec_name = specs[i].name;
        arm.defines = define_sets[i];
        arm.provenance = {device.name(), engine.arch(), rows[i].defines, engine.flags().tier(),
                          source_hash};
        arms.push_back(std::move(arm));
    }
    return arms;
}

HostBuffer generated_input(const BufferSpec& spec, std::uint64_t seed) {
    // The unscaled stream is generated_buffer's own, so recorded digests of unscaled inputs
    // keep their meaning.
    HostBuffer b = generated_buffer(spec.name, spec.dtype, spec.count, seed);
    if (spec.scale != 1.0f || spec.offset != 0.0f)
        for (std::size_t i = 0; i < spec.count; ++i)
            store(b, i, uniform(seed, i) * spec.scale + spec.offset);
    return b;
}

std::vector<HostBuffer> generated_inputs(const CaseLayout& layout, std::uint64_t seed, int set) {
    const std::size_t n = layout.inputs.size();
    std::vector<HostBuffer> out;
    for (std::size_t k = 0; k < n; ++k)
        out.push_back(
            generated_input(layout.inputs[k], seed + static_cast<std::uint64_t>(set) * n + k));
    return out;
}

std::vector<double> element_values(const HostBuffer& buffer) {
    std::vector<double> out(buffer.count);
    for (std::size_t i = 0; i < buffer.count; ++i) {
        if (buffer.dtype == DType::bf16) {
            std::uint16_t bits;
            std::memcpy(&bits, buffer.bytes.data() + 2 * i, 2);
            out[i] = from_bf16(bits);
        } else {
            float v;
            std::memcpy(&v, buffer.bytes.data() + 4 * i, 4);
            out[i] = v;
        }
    }
    return out;
}

std::vector<std::vector<double>> reference_outputs(const KernelCase& kc, const ShapeValues& shape,
                                                   const Defines& defines, const CaseLayout& layout,
                                                   std::span<const HostBuffer> inputs) {
    std::vector<std::vector<double>> in;
    for (const HostBuffer& b : inputs)
        in.push_back(element_values(b));
    std::vector<std::vector<double>> out;
    for (const BufferSpec& spec : layout.outputs)
        out.emplace_back(spec.count);
    kc.reference(shape, defines, in, out);
    return out;
}

CaseBuffers::CaseBuffers(const CaseLayout& layout, std::uint64_t seed, int input_sets)
    : layout_(layout) {
    for (int s = 0; s < input_sets; ++s)
        add_input_set(generated_inputs(layout, seed, s));
    for (const BufferSpec& spec : layout.outputs) {
        outputs_.emplace_back(spec.count * dtype_size(spec.dtype));
        output_ptrs_.push_back(outputs_.back().ptr());
    }
}

CaseBuffers::CaseBuffers(const CaseLayout& layout, std::span<const HostBuffer> inputs)
    : CaseBuffers(layout, 0, 0) {
    add_input_set(inputs);
}

void CaseBuffers::add_input_set(std::span<const HostBuffer> inputs) {
    if (inputs.size() != layout_.inputs.size())
        throw Error(layout_.entry + " takes " + std::to_string(layout_.inputs.size()) +
                    " inputs, not " + std::to_string(inputs.size()));
    std::vector<DeviceBuffer> set;
    std::vector<CUdeviceptr> ptrs;
    for (const HostBuffer& host : inputs) {
        DeviceBuffer d(host.bytes.size());
        d.upload(host.bytes.data(), host.bytes.size());
        ptrs.push_back(d.ptr());
        set.push_back(std::move(d));
    }
    inputs_.push_back(std::move(set));
    input_ptrs_.push_back(std::move(ptrs));
}

void CaseBuffers::fill_canary() {
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
        const BufferSpec& spec = layout_.outputs[i];
        const HostBuffer host = canary_buffer(spec.name, spec.dtype, spec.count);
        outputs_[i].upload(host.bytes.data(), host.bytes.size());
    }
}

std::vector<HostBuffer> CaseBuffers::download() const {
    std::vector<HostBuffer> out;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
        const BufferSpec& spec = layout_.outputs[i];
        HostBuffer h;
        h.name = spec.name;
        h.dtype = spec.dtype;
        h.count = spec.count;
        h.bytes.resize(outputs_[i].bytes());
        outputs_[i].download(h.bytes.data(), h.bytes.size());
        out.push_back(std::move(h));
    }
    return out;
}

LaunchSequence case_launch(const KernelCase& kc, const PreparedArm& arm, const ShapeValues& shape,
                           const CaseBuffers& buffers) {
    const Function& fn = arm.function(buffers.layout().entry);
    return [&kc, &fn, &arm, &shape, &buffers](CUstream stream) {
        kc.launch(fn, arm.defines, shape, buffers.inputs(), buffers.outputs(), stream);
    };
}

std::vector<HostBuffer> run_case_once(const KernelCase& kc, const PreparedArm& arm,
                                      const ShapeValues& shape, CaseBuffers& buffers,
                                      LaunchConfig* launched) {
    buffers.fill_canary();
    buffers.select(0);
    const Stream stream;
    const LaunchConfig config = kc.launch(arm.function(buffers.layout().entry), arm.defines, shape,
                                          buffers.inputs(), buffers.outputs(), stream.handle());
    stream.synchronize();
    if (launched)
        *launched = config;
    return buffers.download();
}

} // namespace kjit
