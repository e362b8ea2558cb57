#include "tuning/sweep_runner.hpp"

#include "jit/cache_key.hpp"
#include "jit/disk_cache.hpp"
#include "jit/names.hpp"
#include "runtime/buffer.hpp"
#include "runtime/engine.hpp"
#include "runtime/geometry.hpp"
#include "kernels/reference.hpp"
#include "kernels/registry.hpp"
#include "kernels/numeric.hpp"
#include "tuning/numeric.hpp"
#include "tuning/roofline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace kjit {

namespace fs = std::filesystem;

namespace {

std::string spec_name(const SweepSpec& spec, const SweepVariant& v) {
    return spec.kernel + "[" + v.label() + "]";
}

/// Every define of the sweep must be read by the kernel (an identifier in its source or the
/// headers it can include); otherwise the sweep would measure one kernel many times.
void check_defines_read(const SweepSpec& spec, const SourceSet& sources) {
    const SourceFile& kernel = [&]() -> const SourceFile& {
        try {
            return sources.kernel(spec.kernel);
        } catch (const NotFoundError& e) {
            const auto [line, col] = spec.positions.at("kernel");
            throw ConfigError(e.what(), spec.file, line, col);
        }
    }();
    std::string text = kernel.text;
    for (const auto* h : sources.headers())
        text += "\n" + h->text;
    std::set<std::string> tested;
    static const std::regex knob(R"(#\s*(?:ifndef|ifdef|define)\s+(\w+))");
    for (std::sregex_iterator it(text.begin(), text.end(), knob), end; it != end; ++it)
        tested.insert((*it)[1]);
    std::vector<std::string> names;
    for (const auto& [k, _] : spec.defines)
        names.push_back(k);
    for (const auto& p : spec.params)
        if (p.define)
            names.push_back(p.name);
    for (const auto& name : names) {
        if (std::regex_search(text, std::regex("\\b" + name + "\\b")))
            continue;
        std::string near;
        std::size_t best = std::max<std::size_t>(3, name.size() / 3) + 1;
        for (const auto& t : tested)
            if (const std::size_t d = edit_distance(name, t); d < best) {
                best = d;
                near = t;
            }
        const auto [line, col] = spec.positions.count(name) ? spec.positions.at(name)
                                                              : std::pair<int, int>{1, 1};
        throw ConfigError("define " + name + " is never read by " + kernel.path +
                              (near.empty() ? "" : "; did you mean " + near + "?"),
                          spec.file, line, col);
    }
}


// ---- results cache: one small text file per row, keyed by everything that shapes it ----

fs::path results_dir() { return DiskCache::default_dir() / "sweeps"; }

std::string row_key(const SweepSpec& spec, const SweepVariant& v, const std::string& compile_key,
                    const std::string& gpu, std::uint64_t seed) {
    std::string k = compile_key + "|" + v.label() + "|" + v.grid.str() + v.block.str() + "|" +
                    std::to_string(v.smem) + "|" + gpu + "|" + std::to_string(seed) + "|" +
                    std::to_string(nvrtc_version()) + "|" + spec.text;
    return hash128(k).hex();
}

void store_row(const SweepRow& r) {
    std::error_code ec;
    fs::create_directories(results_dir(), ec);
    std::ostringstream os;
    os.precision(17);
    os << "blocks_per_sm " << r.blocks_per_sm << "\nwaves " << r.waves << "\nsm_share "
       << r.sm_share << "\nregisters " << r.registers << "\ngbps " << r.gbps << "\ncopy_share "
       << r.copy_share << "\nunwritten " << r.unwritten << "\nerror_vs_reference "
       << r.error_vs_reference << "\nsamples";
    for (double s : r.stats.samples)
        os << ' ' << s;
    os << "\ndigests";
    for (const auto& [n, d] : r.digests)
        os << ' ' << n << ':' << hex64(d);
    os << '\n';
    const fs::path file = results_dir() / (r.key + ".row");
    const fs::path tmp = file.string() + ".tmp." + std::to_string(::getpid());
    std::ofstream(tmp) << os.str();
    fs::rename(tmp, file, ec);
}

bool load_row(SweepRow& r) {
    std::ifstream in(results_dir() / (r.key + ".row"));
    if (!in)
        return false;
    std::string line;
    std::vector<double> samples;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string name;
        ls >> name;
        if (name == "blocks_per_sm")
            ls >> r.blocks_per_sm;
        else if (name == "waves")
            ls >> r.waves;
        else if (name == "sm_share")
            ls >> r.sm_share;
        else if (name == "registers")
            ls >> r.registers;
        else if (name == "gbps")
            ls >> r.gbps;
        else if (name == "copy_share")
            ls >> r.copy_share;
        else if (name == "unwritten")
            ls >> r.unwritten;
        else if (name == "error_vs_reference")
            ls >> r.error_vs_reference;
        else if (name == "samples")
            for (double v; ls >> v;)
                samples.push_back(v);
        else if (name == "digests")
            for (std::string d; ls >> d;) {
                const auto colon = d.rfind(':');
                const auto v = parse_hex64(d.substr(colon + 1));
                if (colon == std::string::npos || !v)
                    return false;
                r.digests.emplace_back(d.substr(0, colon), *v);
            }
    }
    if (samples.empty())
        return false;
    r.stats = Stats::of(samples);
    r.cached = true;
    return true;
}

/// The device buffers of the sweep's arguments, sized for the largest variant.
struct ArgBuffers {
    std::vector<DeviceBuffer> buffers; // one per argument (empty for scalars)
    std::vector<std::size_t> capacity;
};

std::size_t arg_count(const SweepArg& a, const Scope& s) {
    const long long n = a.count->eval_int(s);
    if (n < 0)
        throw ConfigError("argument " + a.name + ": count '" + a.count->text() + "' = " +
                          std::to_string(n) + " is negative");
    return static_cast<std::size_t>(n);
}

/// One launch of `fn` for variant `v` with the sweep's arguments.
void launch_variant(const Function& fn, const SweepSpec& spec, const SweepVariant& v,
                    const ArgBuffers& bufs, CUstream stream) {
    const Scope s = spec.scope(v.params);
    std::vector<CUdeviceptr> ptrs(spec.args.size());
    std::vector<int> ints(spec.args.size());
    std::vector<float> floats(spec.args.size());
    std::vector<void*> params;
    std::vector<std::size_t> sizes, aligns;
    std::string signature;
    for (std::size_t i = 0; i < spec.args.size(); ++i) {
        const SweepArg& a = spec.args[i];
        if (a.pointer) {
            ptrs[i] = bufs.buffers[i].ptr();
            params.push_back(&ptrs[i]);
            sizes.push_back(sizeof(CUdeviceptr));
            aligns.push_back(alignof(CUdeviceptr));
            signature += 'p';
        } else if (a.is_int) {
            ints[i] = static_cast<int>(a.value->eval_int(s));
            params.push_back(&ints[i]);
            sizes.push_back(sizeof(int));
            aligns.push_back(alignof(int));
            signature += 'i';
        } else {
            floats[i] = static_cast<float>(a.value->eval(s));
            params.push_back(&floats[i]);
            sizes.push_back(sizeof(float));
            aligns.push_back(alignof(float));
            signature += 'f';
        }
    }
    // The first-launch check runs once per argument-type list: intern the list's spelling.
    static std::mutex m;
    static std::set<std::string> interned;
    const void* token;
    {
        std::lock_guard lock(m);
        token = &*interned.insert(signature).first;
    }
    LaunchConfig c{v.grid, v.block, v.smem, stream};
    fn.launch_packed(c, params.data(), sizes, aligns, token);
}

/// The outputs of the contract `spec.reference` in float64, by output name, computed from the
/// sweep's initial buffers (matched to the contract's inputs by name) at the sweep's shape.
std::map<std::string, std::vector<double>> tolerance_reference(const SweepSpec& spec,
                                                               const SweepVariant& base,
                                                               const std::vector<HostBuffer>& initial) {
    const KernelContract* contract = nullptr;
    try {
        contract = &kernel_contract(spec.reference);
    } catch (const NotFoundError& e) {
        throw ConfigError(std::string("[check] reference: ") + e.what(), spec.file);
    }
    ShapeValues shape;
    for (const auto& [k, v] : spec.shape)
        shape[k] = v;
    DType dtype = DType::f32;
    for (const auto& a : spec.args)
        if (a.output) {
            dtype = a.dtype;
            break;
        }
    const CasePlan plan = plan_case(*contract, shape, dtype, base.defines);
    std::vector<std::vector<double>> inputs;
    for (std::size_t k : plan.inputs) {
        const BufferSpec& b = plan.buffers[k];
        const auto it = std::find_if(initial.begin(), initial.end(),
                                     [&](const HostBuffer& h) { return h.name == b.name; });
        if (it == initial.end())
            throw ConfigError("tolerance reference " + spec.reference + " reads an input '" +
                                  b.name + "' that the sweep has no argument for",
                              spec.file);
        std::vector<double> v = element_values(*it);
        v.resize(b.count);
        inputs.push_back(std::move(v));
    }
    std::vector<std::vector<double>> outputs = reference_outputs(plan, inputs);
    std::map<std::string, std::vector<double>> out;
    for (std::size_t i = 0; i < plan.outputs.size(); ++i)
        out[plan.buffers[plan.outputs[i]].name] = std::move(outputs[i]);
    return out;
}

} // namespace

SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    SweepResult result;
    const std::vector<SweepVariant> variants = expand(spec, &result.rejected);
    SourceProvider provider = SourceProvider::from_environment();
    const auto sources = provider.current();
    check_defines_read(spec, *sources);
    result.provenance.defines = defines_text(spec.defines);
    result.provenance.source_hash = sources->kernel(spec.kernel).hash.hex().substr(0, 12);
    result.rows.resize(variants.size());
    for (std::size_t i = 0; i < variants.size(); ++i)
        result.rows[i].variant = variants[i];

    std::vector<KernelSpec> specs;
    for (const auto& v : variants)
        specs.push_back({spec_name(spec, v), spec.kernel, v.defines, ""});

    if (options.dry_run) {
        EngineOptions eo;
        eo.arch = options.arch.empty() ? "sm_90" : options.arch;
        eo.cache.use_disk = !options.no_cache;
        Engine engine(nullptr, eo, std::move(provider));
        result.provenance.arch = engine.arch();
        result.provenance.tier = engine.flags().tier();
        const auto rows = engine.prepare({}, specs, options.progress);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (!rows[i].error)
                continue;
            try {
                std::rethrow_exception(rows[i].error);
            } catch (const std::exception& e) {
                result.rows[i].error = e.what();
            }
        }
        result.wall_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();
        return result;
    }

    // One worker per device; variant i runs on device i % n, the baseline first.
    std::mutex result_mutex;
    std::vector<std::vector<HostBuffer>> baseline_outputs(1);
    const std::size_t base = static_cast<std::size_t>(
        std::find_if(variants.begin(), variants.end(), [](const auto& v) { return v.baseline; }) -
        variants.begin());
    std::vector<HostBuffer> base_buffers;
    std::exception_ptr failure;
    const auto worker = [&](std::size_t worker_index) {
        try {
            const int ordinal = options.devices[worker_index];
            const Device device = Device::get(ordinal);
            const Context ctx(device);
            EngineOptions eo;
            eo.cache.use_disk = !options.no_cache;
            Engine engine(&ctx, eo, SourceProvider(provider.override_dir()));
            std::vector<std::size_t> mine;
            for (std::size_t i = 0; i < variants.size(); ++i)
                if (i % options.devices.size() == worker_index)
                    mine.push_back(i);
            // Keys first: rows in the results cache need neither compile nor launch.
            std::vector<KernelSpec> to_prepare;
            std::vector<std::size_t> prepared_rows;
            const std::string gpu = device.name() + " " + device.arch();
            for (std::size_t i : mine) {
                SweepRow& row = result.rows[i];
                row.device = ordinal;
                CompileOptions co;
                co.arch = device.arch();
                co.defines = variants[i].defines;
                engine.flags().apply_to(co);
                row.key = row_key(spec, variants[i], make_cache_key(*sources, spec.kernel, co).hex(),
                                  gpu, options.seed);
                if (!options.no_cache && load_row(row))
                    continue;
                to_prepare.push_back(specs[i]);
                prepared_rows.push_back(i);
            }
            {
                std::lock_guard lock(result_mutex);
                result.provenance.gpu = device.name();
                result.provenance.arch = device.arch();
                result.provenance.tier = engine.flags().tier();
            }
            const auto prep = engine.prepare({}, to_prepare, options.progress);
            const Ceilings ceilings = measure_ceilings(device);
            {
                std::lock_guard lock(result_mutex);
                result.copy_gbps = ceilings.copy_gbps;
            }
            // Inputs once, sized for the largest variant; outputs likewise.
            ArgBuffers bufs;
            bufs.buffers.resize(spec.args.size());
            bufs.capacity.assign(spec.args.size(), 0);
            for (const auto& v : variants) {
                const Scope s = spec.scope(v.params);
                for (std::size_t a = 0; a < spec.args.size(); ++a)
                    if (spec.args[a].pointer)
                        bufs.capacity[a] = std::max(bufs.capacity[a], arg_count(spec.args[a], s));
            }
            // What each buffer starts as; an output with an init is read and written by the
            // kernel (a state updated in place) and is reset to it before each variant's check.
            std::vector<HostBuffer> initial(spec.args.size());
            for (std::size_t a = 0; a < spec.args.size(); ++a) {
                const SweepArg& arg = spec.args[a];
                if (!arg.pointer)
                    continue;
                HostBuffer& h = initial[a];
                if (arg.init == SweepArg::Init::random)
                    h = generated_buffer(arg.name, arg.dtype, bufs.capacity[a], options.seed + a);
                else {
                    h = canary_buffer(arg.name, arg.dtype, bufs.capacity[a]);
                    const float value = arg.init == SweepArg::Init::value
                                            ? static_cast<float>(arg.value->eval(spec.scope({})))
                                            : 0.0f;
                    for (std::size_t e = 0; e < h.count; ++e) {
                        if (arg.dtype == DType::f32)
                            std::memcpy(h.bytes.data() + e * 4, &value, 4);
                        else {
                            const std::uint16_t b = to_bf16(value);
                            std::memcpy(h.bytes.data() + e * 2, &b, 2);
                        }
                    }
                }
                bufs.buffers[a] = DeviceBuffer(std::max<std::size_t>(h.bytes.size(), 1));
                if (!h.bytes.empty())
                    bufs.buffers[a].upload(h.bytes.data(), h.bytes.size());
            }
            // Tolerance mode: the float64 reference of the contract `reference`, fed the
            // sweep's own inputs by name, once per worker.
            std::map<std::string, std::vector<double>> want;
            if (spec.check == SweepSpec::Check::tolerance && !prepared_rows.empty())
                want = tolerance_reference(spec, variants[base], initial);
            std::vector<std::size_t> order = prepared_rows;
            std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return i == base; });
            for (std::size_t i : order) {
                SweepRow& row = result.rows[i];
                const std::size_t p = static_cast<std::size_t>(
                    std::find(prepared_rows.begin(), prepared_rows.end(), i) - prepared_rows.begin());
                if (prep[p].error) {
                    try {
                        std::rethrow_exception(prep[p].error);
                    } catch (const std::exception& e) {
                        row.error = e.what();
                    }
                    continue;
                }
                try {
                    const Function& fn = engine.function(specs[i].name, spec.entry);
                    const Scope s = spec.scope(variants[i].params);
                    // Pure outputs get the canary, in/out buffers their initial content; one launch,
                    // then digests of every output.
                    for (std::size_t a = 0; a < spec.args.size(); ++a)
                        if (spec.args[a].output) {
                            const HostBuffer c =
                                spec.args[a].in_out
                                    ? initial[a]
                                    : canary_buffer(spec.args[a].name, spec.args[a].dtype,
                                                    bufs.capacity[a]);
                            bufs.buffers[a].upload(c.bytes.data(), c.bytes.size());
                        }
                    BenchOptions bo;
                    bo.warmup = spec.warmup;
                    bo.reps = spec.reps;
                    bo.flush_l2 = spec.flush_l2;
                    bo.graph = spec.graph;
                    Bench bench(device, bo);
                    launch_variant(fn, spec, variants[i], bufs, bench.stream());
                    check(driver().cuStreamSynchronize(bench.stream()), "cuStreamSynchronize");
                    std::vector<HostBuffer> outs;
                    for (std::size_t a = 0; a < spec.args.size(); ++a) {
                        if (!spec.args[a].output)
                            continue;
                        HostBuffer h;
                        h.name = spec.args[a].name;
                        h.dtype = spec.args[a].dtype;
                        h.count = arg_count(spec.args[a], s);
                        h.bytes.resize(bufs.capacity[a] * dtype_size(h.dtype));
                        bufs.buffers[a].download(h.bytes.data(), h.bytes.size());
                        h.bytes.resize(h.count * dtype_size(h.dtype));
                        if (!spec.args[a].in_out)
                            row.unwritten += find_unwritten(h).count;
                        if (const auto w = want.find(h.name); w != want.end())
                            row.error_vs_reference = std::max(
                                row.error_vs_reference, relative_l2(element_values(h), w->second));
                        row.digests.emplace_back(h.name, digest(h));
                        outs.push_back(std::move(h));
                    }
                    if (i == base) {
                        std::lock_guard lock(result_mutex);
                        base_buffers = outs;
                    }
                    row.stats = bench.run([&](CUstream st) {
                        launch_variant(fn, spec, variants[i], bufs, st);
                    });
                    const LaunchGeometry g =
                        launch_geometry(fn, {variants[i].grid, variants[i].block, variants[i].smem});
                    row.blocks_per_sm = g.blocks_per_sm;
                    row.waves = g.waves;
                    row.sm_share = g.sm_share;
                    row.registers = fn.registers();
                    if (spec.bytes) {
                        row.gbps = spec.bytes->eval(s) / (row.stats.median * 1e-3) / 1e9;
                        row.copy_share = ceilings.copy_gbps > 0 ? row.gbps / ceilings.copy_gbps : 0;
                    }
                    if (!options.no_cache)
                        store_row(row);
                } catch (const std::exception& e) {
                    row.error = e.what();
                }
            }
        } catch (...) {
            std::lock_guard lock(result_mutex);
            failure = std::current_exception();
        }
    };
    if (options.devices.size() == 1) {
        worker(0);
    } else {
        std::vector<std::thread> threads;
        for (std::size_t w = 0; w < options.devices.size(); ++w)
            threads.emplace_back(worker, w);
        for (auto& t : threads)
            t.join();
    }
    if (failure)
        std::rethrow_exception(failure);

    // Checks and ratios against the baseline variant.
    const SweepRow& b = result.rows[base];
    for (auto& row : result.rows) {
        if (!row.error.empty()) {
            row.check = "FAILED";
            continue;
        }
        if (b.error.empty() && b.stats.median > 0)
            row.ratio = row.stats.median / b.stats.median;
        if (row.unwritten > 0) {
            row.check = "UNWRITTEN " + std::to_string(row.unwritten);
            continue;
        }
        if (spec.check == SweepSpec::Check::tolerance) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.2e", row.error_vs_reference);
            row.check = (row.error_vs_reference >= 0 && row.error_vs_reference <= spec.rtol
                             ? "within tolerance "
                             : "OUT OF TOLERANCE ") +
                        std::string(buf);
            continue;
        }
        if (spec.check != SweepSpec::Check::digest) {
            row.check = "-";
            continue;
        }
        if (!b.error.empty()) {
            row.check = "no baseline";
            continue;
        }
        if (row.digests == b.digests) {
            row.check = "IDENTICAL";
            continue;
        }
        row.check = "DIFFERS";
        for (std::size_t o = 0; o < row.digests.size() && o < b.digests.size(); ++o)
            if (row.digests[o] != b.digests[o])
                row.check += " (" + row.digests[o].first + ")";
    }
    result.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
}

std::string sweep_table(const SweepSpec& spec, const SweepResult& result) {
    std::vector<const SweepRow*> rows;
    for (const auto& r : result.rows)
        rows.push_back(&r);
    std::stable_sort(rows.begin(), rows.end(), [](const SweepRow* a, const SweepRow* b) {
        if (a->error.empty() != b->error.empty())
            return a->error.empty();
        return a->stats.median < b->stats.median;
    });
    std::ostringstream os;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-28s %3s %-14s %-12s %5s %9s %6s %6s %10s %7s %8s %6s %7s  %s\n",
                  "variant", "dev", "grid", "block", "regs", "blocks/SM", "waves", "SMs",
                  "median us", "spread", "GB/s", "copy", "ratio", "check");
    os << buf;
    for (const SweepRow* r : rows) {
        std::string label = r->variant.label() + (r->variant.baseline ? " *" : "");
        if (!r->error.empty()) {
            std::snprintf(buf, sizeof buf, "%-28s %3d %-14s %-12s FAILED: %s\n", label.c_str(),
                          r->device, r->variant.grid.str().c_str(), r->variant.block.str().c_str(),
                          r->error.substr(0, 160).c_str());
            os << buf;
            continue;
        }
        std::snprintf(buf, sizeof buf,
                      "%-28s %3d %-14s %-12s %5d %9d %6.2f %5.1f%% %10.2f %6.1f%% %8.1f %5.1f%% %7.3f  %s%s\n",
                      label.c_str(), r->device, r->variant.grid.str().c_str(), r->variant.block.str().c_str(),
                      r->registers, r->blocks_per_sm, r->waves, 100 * r->sm_share,
                      r->stats.median * 1000, 100 * r->stats.relative_spread(), r->gbps,
                      100 * r->copy_share, r->ratio, r->check.c_str(), r->cached ? " (cached)" : "");
        os << buf;
    }
    (void)spec;
    return os.str();
}

void write_sweep_outputs(const SweepSpec& spec, const SweepResult& result, const fs::path& dir) {
    fs::create_directories(dir);
    std::ofstream csv(dir / "sweep.csv");
    csv << "variant";
    for (const auto& p : spec.params)
        csv << ',' << p.name;
    csv << ",device,grid,block,smem,registers,blocks_per_sm,waves,sm_share,median_ms,min_ms,max_ms,"
           "stddev_ms,gbps,copy_share,ratio,check,error\n";
    std::ofstream json(dir / "sweep.json");
    json << "{\n  \"kernel\": \"" << spec.kernel << "\",\n  \"provenance\": \""
         << result.provenance.text() << "\",\n  \"copy_gbps\": " << result.copy_gbps
         << ",\n  \"rows\": [\n";
    const auto quoted = [](std::string s) {
        std::string out = "\"";
        for (char c : s)
            out += c == '"' || c == '\\' ? std::string("\\") + c : c == '\n' ? std::string("\\n") : std::string(1, c);
        return out + "\"";
    };
    for (std::size_t i = 0; i < result.rows.size(); ++i) {
        const SweepRow& r = result.rows[i];
        csv << '"' << r.variant.label() << '"';
        for (const auto& p : spec.params)
            csv << ',' << r.variant.params.at(p.name);
        csv << ',' << r.device << ',' << '"' << r.variant.grid.str() << "\",\"" << r.variant.block.str() << "\","
            << r.variant.smem << ',' << r.registers << ',' << r.blocks_per_sm << ',' << r.waves
            << ',' << r.sm_share << ',' << r.stats.median << ',' << r.stats.min << ','
            << r.stats.max << ',' << r.stats.stddev << ',' << r.gbps << ',' << r.copy_share << ','
            << r.ratio << ',' << '"' << r.check << "\"," << quoted(r.error) << '\n';
        json << "    {\"variant\": " << quoted(r.variant.label()) << ", \"params\": {";
        bool first = true;
        for (const auto& [k, v] : r.variant.params) {
            json << (first ? "" : ", ") << quoted(k) << ": " << v;
            first = false;
        }
        json << "}, \"device\": " << r.device << ", \"baseline\": " << (r.variant.baseline ? "true" : "false")
             << ", \"grid\": " << quoted(r.variant.grid.str()) << ", \"block\": "
             << quoted(r.variant.block.str()) << ", \"blocks_per_sm\": " << r.blocks_per_sm
             << ", \"waves\": " << r.waves << ", \"sm_share\": " << r.sm_share
             << ", \"median_ms\": " << r.stats.median << ", \"samples_ms\": [";
        for (std::size_t s = 0; s < r.stats.samples.size(); ++s)
            json << (s ? ", " : "") << r.stats.samples[s];
        json << "], \"gbps\": " << r.gbps << ", \"ratio\": " << r.ratio
             << ", \"check\": " << quoted(r.check) << ", \"error\": " << quoted(r.error) << "}"
             << (i + 1 < result.rows.size() ? "," : "") << '\n';
    }
    json << "  ]\n}\n";

    // SVG: one bar per variant (median time), in file order, the baseline in another colour.
    double top = 0;
    for (const auto& r : result.rows)
        top = std::max(top, r.stats.median * 1000);
    const int bar = 28, gap = 8, left = 70, height = 320, bottom = 170;
    const int width = left + static_cast<int>(result.rows.size()) * (bar + gap) + 40;
    std::ofstream svg(dir / "sweep.svg");
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
        << height + bottom << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
        << "<text x=\"10\" y=\"18\" font-size=\"14\">kjit sweep " << spec.kernel
        << ": median time per launch (us)</text>\n"
        << "<text x=\"10\" y=\"34\">" << result.provenance.text() << "</text>\n";
    for (int t = 0; t <= 4 && top > 0; ++t) {
        const double v = top * t / 4;
        const int y = height - static_cast<int>((height - 50) * t / 4.0);
        svg << "<line x1=\"" << left << "\" x2=\"" << width - 20 << "\" y1=\"" << y << "\" y2=\""
            << y << "\" stroke=\"#ddd\"/><text x=\"5\" y=\"" << y + 4 << "\">" << std::round(v * 100) / 100
            << "</text>\n";
    }
    for (std::size_t i = 0; i < result.rows.size(); ++i) {
        const SweepRow& r = result.rows[i];
        const int x = left + static_cast<int>(i) * (bar + gap);
        const double v = r.stats.median * 1000;
        const int h = top > 0 ? static_cast<int>((height - 50) * v / top) : 0;
        const char* colour = !r.error.empty() ? "#c33" : r.variant.baseline ? "#e90" : "#38c";
        svg << "<rect x=\"" << x << "\" y=\"" << height - h << "\" width=\"" << bar
            << "\" height=\"" << h << "\" fill=\"" << colour << "\"><title>" << r.variant.label()
            << ": " << v << " us " << r.check << "</title></rect>\n"
            << "<text transform=\"translate(" << x + bar / 2 << "," << height + 8
            << ") rotate(60)\">" << r.variant.label() << "</text>\n";
    }
    svg << "</svg>\n";
}

} // namespace kjit
