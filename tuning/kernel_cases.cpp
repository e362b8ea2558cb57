#include "tuning/kernel_cases.hpp"

#include "jit/compile_options.hpp"
#include "runtime/buffer.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace kjit {

LaunchConfig launch_rms_norm(const Function& fn, unsigned block, CUdeviceptr x, CUdeviceptr w,
                             CUdeviceptr y, int rows, int n, float eps, CUstream stream) {
    LaunchConfig config;
    config.grid.x = static_cast<unsigned>(rows);
    config.block.x = block;
    config.stream = stream;
    fn.launch(config, x, w, y, rows, n, eps);
    return config;
}

namespace {

int define_int(const Defines& defines, const std::string& name) {
    const auto it = defines.find(name);
    if (it == defines.end())
        throw ConfigError("the launch needs define " + name + " and it is not set");
    int v = 0;
    const auto [end, ec] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || end != it->second.data() + it->second.size() || v <= 0)
        throw ConfigError("define " + name + "=" + it->second + " must be a positive integer");
    return v;
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
        const auto rows = static_cast<std::size_t>(s.at("rows"));
        const auto n = static_cast<std::size_t>(s.at("n"));
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
        launch_rms_norm(fn, static_cast<unsigned>(define_int(defines, "RMS_BLOCK")), in[0], in[1],
                        out[0], static_cast<int>(s.at("rows")), static_cast<int>(s.at("n")),
                        kRmsNormEps, stream);
    };
    return kc;
}

} // namespace

const std::vector<KernelCase>& kernel_cases() {
    static const std::vector<KernelCase> table = {rms_norm_row()};
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

std::vector<PreparedArm> prepare_arms(Engine& engine, const KernelCase& kc,
                                      const std::vector<Defines>& define_sets,
                                      const Device& device) {
    std::vector<KernelSpec> specs;
    for (const Defines& d : define_sets) {
        std::string name = kc.kernel;
        for (const auto& [k, v] : d)
            name += "/" + k + "=" + v;
        KernelSpec spec;
        spec.name = std::move(name);
        spec.source = kc.kernel;
        spec.defines = d;
        specs.push_back(std::move(spec));
    }
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

CaseBuffers::CaseBuffers(const CaseLayout& layout, std::uint64_t seed, int input_sets)
    : layout_(layout) {
    const std::size_t n_inputs = layout.inputs.size();
    for (int s = 0; s < input_sets; ++s) {
        std::vector<DeviceBuffer> set;
        std::vector<CUdeviceptr> ptrs;
        for (std::size_t k = 0; k < n_inputs; ++k) {
            const BufferSpec& spec = layout.inputs[k];
            const HostBuffer host =
                generated_buffer(spec.name, spec.dtype, spec.count,
                                 seed + static_cast<std::uint64_t>(s) * n_inputs + k);
            DeviceBuffer d(host.bytes.size());
            d.upload(host.bytes.data(), host.bytes.size());
            ptrs.push_back(d.ptr());
            set.push_back(std::move(d));
        }
        inputs_.push_back(std::move(set));
        input_ptrs_.push_back(std::move(ptrs));
    }
    for (const BufferSpec& spec : layout.outputs) {
        outputs_.emplace_back(spec.count * dtype_size(spec.dtype));
        output_ptrs_.push_back(outputs_.back().ptr());
    }
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
                                      const ShapeValues& shape, CaseBuffers& buffers) {
    buffers.fill_canary();
    buffers.select(0);
    const Stream stream;
    case_launch(kc, arm, shape, buffers)(stream.handle());
    stream.synchronize();
    return buffers.download();
}

} // namespace kjit
