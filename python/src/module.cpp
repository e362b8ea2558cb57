// kjit's Python module: the C++ library bound with nanobind. Everything here calls the library
// (the verbs' own functions where a verb exists); nothing of it is re-implemented in Python.
#include "core/error.hpp"
#include "core/flags.hpp"
#include "jit/compile_cache.hpp"
#include "jit/compiler.hpp"
#include "jit/error.hpp"
#include "jit/project.hpp"
#include "jit/shape_check.hpp"
#include "jit/shape_file.hpp"
#include "jit/source_choice.hpp"
#include "kernels/contract_toml.hpp"
#include "lint/libclang.hpp"
#include "lint/lint.hpp"
#include "lint/signature.hpp"
#include "lint/sources.hpp"
#include "runtime/context.hpp"
#include "runtime/driver.hpp"
#include "runtime/engine.hpp"
#include "runtime/launch.hpp"
#include "tuning/sweep_report.hpp"
#include "tuning/sweep_runner.hpp"
#include "tuning/sweep_spec.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace kjit::python {
namespace {

/// The sources a call reads: `src` when given, else the one precedence every verb uses
/// (KJIT_KERNEL_DIR, the project file found from the working directory, the embedded copies).
SourceChoice sources_of(const std::optional<std::string>& src) {
    if (!src)
        return default_sources();
    // As --src: the directory replaces the project's kernels, its include_dirs stay.
    const std::optional<Project> project = Project::discover();
    return choose_sources(*src, process_flags(), project ? &*project : nullptr);
}

nb::dict param_dict(const ParamType& p) {
    nb::dict d;
    static const char* kinds[] = {"integer", "floating", "pointer", "bytes"};
    d["kind"] = kinds[static_cast<int>(p.kind)];
    d["size"] = p.size;
    d["align"] = p.align;
    d["name"] = p.name;
    d["ptx"] = p.ptx();
    return d;
}

nb::dict entries_dict(const CompiledKernel& c) {
    nb::dict out;
    for (const EntryParams& e : c.entries) {
        nb::list params;
        for (const ParamType& p : e.params)
            params.append(param_dict(p));
        out[nb::str(e.entry.c_str())] = params;
    }
    return out;
}

nb::dict compiled_dict(const CompiledKernel& c, const Specialized* s) {
    nb::dict d;
    d["kernel"] = c.kernel;
    d["path"] = c.path;
    d["arch"] = c.options.arch;
    d["defines"] = c.options.defines;
    d["source_hash"] = c.source_hash.hex();
    d["cubin"] = nb::bytes(c.cubin.data(), c.cubin.size());
    d["ptx"] = c.ptx;
    d["log"] = c.log;
    d["compile_ms"] = c.compile_ms;
    d["entries"] = entries_dict(c);
    d["lowered_names"] = c.lowered_names;
    if (s) {
        d["key"] = s->key.hex();
        d["origin"] = s->origin == Origin::disk     ? "disk"
                      : s->origin == Origin::remote ? "remote"
                                                    : "compiled";
    }
    return d;
}

/// kjit.compile: one kernel through the compile cache, as `kjit compile` does.
nb::dict compile_kernel(const std::string& kernel,
                        const std::map<std::string, std::string>& defines, const std::string& arch,
                        const std::optional<std::string>& src,
                        const std::vector<std::string>& names, bool ptx, bool use_cache) {
    const SourceChoice choice = sources_of(src);
    const SourceSet set = choice.load();
    CompileOptions options;
    options.arch = arch;
    options.toolkit_headers = true;
    options.ptx = ptx;
    for (const auto& dir : choice.include_dirs)
        options.include_dirs.push_back(dir.string());
    options.name_expressions = names;
    options.defines = defines;
    CacheSettings settings;
    settings.use_disk = use_cache;
    CompileCache cache(settings);
    Specialized s;
    {
        nb::gil_scoped_release release;
        s = cache.get(set, {kernel, options});
    }
    if (s.error)
        std::rethrow_exception(s.error);
    return compiled_dict(*s.compiled, &s);
}

nb::dict diagnostic_dict(const Diagnostic& d) {
    nb::dict out;
    out["path"] = d.path;
    out["line"] = d.line;
    out["column"] = d.column;
    out["severity"] = std::string(severity_name(d.severity));
    out["message"] = d.message;
    out["rule"] = d.rule;
    out["text"] = d.format();
    return out;
}

/// kjit.lint: `kjit lint` over `paths` (files or directories), else over the kernel directory
/// (src, KJIT_KERNEL_DIR or the project file's) with the project's shape files.
nb::dict lint_files(const std::vector<std::string>& paths, const std::optional<std::string>& src,
                    const std::vector<std::string>& shapes,
                    const std::vector<std::string>& include_dirs,
                    const std::vector<std::string>& archs, const std::string& libclang) {
    const std::optional<Project> project = Project::discover();
    const Project* p = project ? &*project : nullptr;
    lint::LintRun run;
    run.shape_files.assign(shapes.begin(), shapes.end());
    run.include_dirs.assign(include_dirs.begin(), include_dirs.end());
    if (p)
        for (const ProjectPath& dir : p->include_dirs)
            run.include_dirs.push_back(dir.path);
    run.archs = archs.empty() && p ? p->archs : archs;
    run.libclang = libclang;
    std::vector<lint::SourceGroup> groups;
    if (paths.empty()) {
        const SourceChoice choice = choose_sources(src.value_or(""), process_flags(), p);
        require_sources_on_disk(choice, "kjit.lint");
        groups = lint::source_groups({}, false, choice.dir);
        if (shapes.empty() && p)
            for (const ProjectPath& f : p->shape_files)
                run.shape_files.push_back(f.path);
    } else {
        groups = lint::source_groups(paths, false, {});
    }
    lint::LintReport report;
    {
        nb::gil_scoped_release release;
        report = lint::lint_groups(groups, run);
    }
    nb::list findings;
    for (const Diagnostic& d : report.findings)
        findings.append(diagnostic_dict(d));
    nb::dict out;
    out["findings"] = findings;
    out["notes"] = report.notes;
    out["files"] = report.files;
    return out;
}

/// kjit.sweep: `kjit sweep FILE` (run_sweep over the file's space), as sweep.json holds it;
/// the project's contract files are registered first, as every verb does.
std::string sweep_file(const std::string& file, bool dry_run, const std::optional<std::string>& src,
                       const std::optional<std::string>& arch, const std::vector<int>& devices,
                       std::uint64_t seed, bool no_cache) {
    if (const std::optional<Project> project = Project::discover())
        (void)register_project_contracts(*project);
    const SweepSpec spec = SweepSpec::load(file);
    SweepOptions o;
    o.dry_run = dry_run;
    o.no_cache = no_cache;
    o.seed = seed;
    if (!devices.empty())
        o.devices = devices;
    if (arch)
        o.arch = *arch;
    if (src)
        o.sources = sources_of(src);
    SweepResult r;
    {
        nb::gil_scoped_release release;
        r = run_sweep(spec, o);
    }
    return sweep_json(spec, r);
}

/// kjit.sig: `kjit sig --json` over `paths` (else the kernel directory), with libclang.
std::string signatures_of(const std::vector<std::string>& paths,
                          const std::optional<std::string>& src,
                          const std::map<std::string, std::string>& defines,
                          const std::vector<std::string>& include_dirs,
                          const std::vector<std::string>& instantiations,
                          const std::string& libclang) {
    const std::optional<Project> project = Project::discover();
    const Project* p = project ? &*project : nullptr;
    std::vector<lint::SourceGroup> groups;
    if (paths.empty()) {
        const SourceChoice choice = choose_sources(src.value_or(""), process_flags(), p);
        require_sources_on_disk(choice, "kjit.sig");
        groups = lint::source_groups({}, false, choice.dir);
    } else {
        groups = lint::source_groups(paths, false, {});
    }
    std::string why_not;
    const auto clang = lint::Libclang::open(libclang, &why_not);
    if (!clang)
        throw ConfigError("kjit.sig needs libclang: " + why_not);
    std::vector<std::filesystem::path> dirs(include_dirs.begin(), include_dirs.end());
    if (p)
        for (const ProjectPath& dir : p->include_dirs)
            dirs.push_back(dir.path);
    lint::SignatureReport all;
    nb::gil_scoped_release release;
    for (const auto& g : groups) {
        const IncludeResolver resolver(g.sources, dirs);
        lint::SignatureRequest request{
            &g.sources, g.targets, clang.get(), {defines, resolver.search_dirs(), instantiations}};
        auto report = lint::signatures(request);
        all.kernels.insert(all.kernels.end(), std::make_move_iterator(report.kernels.begin()),
                           std::make_move_iterator(report.kernels.end()));
        all.notes.insert(all.notes.end(), report.notes.begin(), report.notes.end());
    }
    return lint::format_signatures(all, true);
}

nb::dict row_dict(const PrepareRow& r) {
    nb::dict d;
    d["name"] = r.name;
    d["source"] = r.source;
    d["defines"] = r.defines;
    d["key"] = r.key;
    d["origin"] = prepared_name(r.origin);
    d["compile_ms"] = r.compile_ms;
    d["read_ms"] = r.read_ms;
    d["load_ms"] = r.load_ms;
    d["define_origins"] = r.define_origins;
    d["tuned"] = r.tuned;
    d["entries"] = r.compiled ? nb::object(entries_dict(*r.compiled)) : nb::none();
    d["error"] = nb::none();
    if (r.error) {
        try {
            std::rethrow_exception(r.error);
        } catch (const std::exception& e) {
            d["error"] = e.what();
        }
    }
    return d;
}

/// How a Python value becomes one kernel parameter's bytes.
struct PackedArgs {
    std::vector<std::vector<unsigned char>> storage;
    std::vector<void*> pointers;
    std::vector<std::size_t> sizes, aligns;
    std::vector<ArgKind> kinds;
    std::vector<nb::object> keep; ///< the arrays whose pointers were taken
};

/// Whether `v` is an array in host memory: a torch tensor that is not on a CUDA device (its
/// data_ptr() is a host address, which a kernel must never get).
bool host_array(nb::handle v) {
    return nb::hasattr(v, "data_ptr") && nb::hasattr(v, "is_cuda") &&
           !nb::cast<bool>(v.attr("is_cuda"));
}

/// The device pointer of an array object: `__cuda_array_interface__` (CuPy, torch, Numba) or
/// `data_ptr()` of a CUDA torch tensor; None as a null pointer.
std::optional<std::uint64_t> device_pointer(nb::handle v) {
    if (v.is_none())
        return 0;
    if (nb::hasattr(v, "__cuda_array_interface__")) {
        nb::dict cai = nb::cast<nb::dict>(v.attr("__cuda_array_interface__"));
        nb::tuple data = nb::cast<nb::tuple>(cai["data"]);
        return nb::cast<std::uint64_t>(data[0]);
    }
    if (nb::hasattr(v, "data_ptr") && !host_array(v))
        return nb::cast<std::uint64_t>(v.attr("data_ptr")());
    return std::nullopt;
}

template <class T> void put(PackedArgs& out, T value, ArgKind kind) {
    std::vector<unsigned char> bytes(sizeof(T));
    std::memcpy(bytes.data(), &value, sizeof(T));
    out.storage.push_back(std::move(bytes));
    out.sizes.push_back(sizeof(T));
    out.aligns.push_back(alignof(T));
    out.kinds.push_back(kind);
}

/// Converts `args` to the kernel's parameters: an array (`__cuda_array_interface__` or
/// `data_ptr()`) or None is a pointer, an int an integer of its parameter's size, a float a
/// float of its parameter's size, bytes an aggregate. Then the C++ launch's own rule
/// (param_mismatch: count, and each kind and size) judges them on every call; LaunchError
/// names the parameter.
PackedArgs pack(const std::string& kernel, const std::vector<ParamType>& params,
                const nb::args& args) {
    PackedArgs out;
    const auto refuse = [&](const std::string& problem) {
        throw LaunchError("kjit launch", CUDA_SUCCESS, kernel, "kernel=" + kernel, problem);
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        nb::handle v = args[i];
        const ParamType* p = i < params.size() ? &params[i] : nullptr;
        const auto sized = [&](ParamKind kind, std::size_t fallback) {
            return p && p->kind == kind ? p->size : fallback;
        };
        if (nb::isinstance<nb::int_>(v)) { // bool too, as C++ counts it
            const std::size_t size = sized(ParamKind::integer, 8);
            std::int64_t x = 0;
            if (std::uint64_t u = 0; !nb::try_cast(v, x) && nb::try_cast(v, u))
                x = static_cast<std::int64_t>(u); // 2^63 .. 2^64 - 1: the same 64 bits
            else if (!nb::try_cast(v, x))
                refuse("argument " + std::to_string(i) + " does not fit 64 bits");
            if (size < 8 &&
                (x < -(std::int64_t{1} << (8 * size - 1)) || x >= (std::int64_t{1} << (8 * size))))
                refuse("argument " + std::to_string(i) + " (" + std::to_string(x) +
                       ") does not fit the kernel's parameter " + std::to_string(i) + ", a " +
                       p->describe());
            std::uint64_t bits = static_cast<std::uint64_t>(x);
            switch (size) {
            case 1:
                put(out, static_cast<std::uint8_t>(bits), ArgKind::integer);
                break;
            case 2:
                put(out, static_cast<std::uint16_t>(bits), ArgKind::integer);
                break;
            case 4:
                put(out, static_cast<std::uint32_t>(bits), ArgKind::integer);
                break;
            default:
                put(out, bits, ArgKind::integer);
                break;
            }
        } else if (nb::isinstance<nb::float_>(v)) {
            if (sized(ParamKind::floating, 8) == 4)
                put(out, static_cast<float>(nb::cast<double>(v)), ArgKind::floating);
            else
                put(out, nb::cast<double>(v), ArgKind::floating);
        } else if (nb::isinstance<nb::bytes>(v)) {
            const auto b = nb::cast<nb::bytes>(v);
            out.storage.emplace_back(b.c_str(), b.c_str() + b.size());
            out.sizes.push_back(b.size());
            out.aligns.push_back(p && p->align ? p->align : 1);
            out.kinds.push_back(ArgKind::other);
        } else if (const auto ptr = device_pointer(v)) {
            put(out, *ptr, ArgKind::pointer);
            out.keep.push_back(nb::borrow(v));
        } else {
            refuse("argument " + std::to_string(i) + " is a " +
                   nb::cast<std::string>(v.type().attr("__name__")) +
                   (host_array(v) ? " in host memory: a kernel takes device arrays"
                                  : ": a kernel takes device arrays (__cuda_array_interface__ "
                                    "or a CUDA tensor's data_ptr()), None, int, float or bytes"));
        }
    }
    if (params.empty() && args.size() != 0)
        refuse("kjit has no parameter types for this entry point (a cache entry written without "
               "them): `kjit cache clear` and prepare again");
    if (const std::string problem = param_mismatch(params, out.sizes, out.kinds); !problem.empty())
        refuse(problem);
    for (auto& s : out.storage)
        out.pointers.push_back(s.data());
    return out;
}

Dim3 dim3_of(nb::handle v) {
    if (nb::isinstance<nb::int_>(v))
        return {nb::cast<unsigned>(v), 1, 1};
    const auto t = nb::cast<std::vector<unsigned>>(v);
    if (t.empty() || t.size() > 3)
        throw ConfigError("a grid or block is an int or a tuple of 1 to 3 ints");
    return {t[0], t.size() > 1 ? t[1] : 1, t.size() > 2 ? t[2] : 1};
}

/// The stream a launch goes to: an int handle, an object with `cuda_stream` (torch) or `ptr`
/// (CuPy); by default torch's current stream when torch is imported, else CuPy's when CuPy
/// is, else the legacy default stream.
CUstream stream_of(nb::handle s, int device) {
    const auto handle = [](nb::handle v) {
        return reinterpret_cast<CUstream>(nb::cast<std::uintptr_t>(v));
    };
    if (s.is_none()) {
        nb::object modules = nb::module_::import_("sys").attr("modules");
        // torch's stream of the function's device (a CPU-only torch has none).
        if (nb::cast<bool>(modules.attr("__contains__")("torch")) &&
            nb::cast<bool>(modules["torch"].attr("cuda").attr("is_available")()))
            return handle(
                modules["torch"].attr("cuda").attr("current_stream")(device).attr("cuda_stream"));
        if (nb::cast<bool>(modules.attr("__contains__")("cupy")))
            return handle(modules["cupy"].attr("cuda").attr("get_current_stream")().attr("ptr"));
        return nullptr;
    }
    if (nb::isinstance<nb::int_>(s))
        return handle(s);
    if (nb::hasattr(s, "cuda_stream"))
        return handle(s.attr("cuda_stream"));
    if (nb::hasattr(s, "ptr"))
        return handle(s.attr("ptr"));
    throw ConfigError("stream: an int handle, a torch.cuda.Stream or a cupy Stream");
}

/// An entry point of an Engine's prepared kernel (valid while the engine lives).
struct PyFunction {
    const Function* function;
    const Context* context; ///< the engine's
    nb::object engine;      ///< keeps the engine, its context and the function alive

    void call(nb::handle grid, nb::handle block, const nb::args& args, nb::handle stream,
              unsigned smem) const {
        // The context is current on the thread that made the engine; any thread may launch.
        context->make_current();
        LaunchConfig config;
        config.grid = dim3_of(grid);
        config.block = dim3_of(block);
        config.smem_bytes = smem;
        config.stream = stream_of(stream, function->device_ordinal());
        PackedArgs packed = pack(function->name(), function->param_types(), args);
        // The arguments were converted by the parameter types, so one token serves them all.
        static const char token = 0;
        function->launch_packed(config, packed.pointers.data(), packed.sizes, packed.aligns, &token,
                                packed.kinds);
    }
};

/// An Engine and the context it launches in (none without a device).
struct PyEngine {
    std::unique_ptr<Context> context;
    std::unique_ptr<Engine> engine;
    SourceChoice sources;
    std::string no_device; ///< why there is no context ("" with one)

    PyEngine(std::optional<int> device, const std::optional<std::string>& arch,
             const std::optional<std::string>& src, const std::optional<std::string>& cache_dir)
        : sources(sources_of(src)) {
        if (device)
            context = std::make_unique<Context>(Device::get(*device));
        else
            no_device = "device=None: it compiles and caches, and loads nothing";
        EngineOptions options;
        if (arch)
            options.arch = *arch;
        if (cache_dir)
            options.cache.dir = *cache_dir;
        engine = std::make_unique<Engine>(context.get(), options, sources.provider());
    }

    /// What each prepared kernel compiled to (its entry points' parameter types).
    std::map<std::string, std::shared_ptr<const CompiledKernel>> compiled;

    nb::list rows(const std::vector<PrepareRow>& rows) {
        nb::list out;
        for (const PrepareRow& r : rows) {
            if (r.compiled)
                compiled[r.name] = r.compiled;
            out.append(row_dict(r));
        }
        return out;
    }

    /// The launch check of `args` for `entry` of prepared kernel `name`, without a GPU: a dry
    /// run of fn(...)'s argument conversion and parameter check.
    void check(const std::string& name, const std::string& entry, const nb::args& args) {
        const auto it = compiled.find(name);
        if (it == compiled.end())
            throw NotFoundError("no prepared kernel '" + name + "'");
        const EntryParams* e = it->second->entry(entry);
        if (!e)
            throw NotFoundError("kernel '" + name + "' has no entry point '" + entry + "'");
        (void)pack(entry, e->params, args);
    }

    nb::list prepare_file(const std::string& shape_file) {
        const SourceSet set = sources.load();
        const ShapeFile file = load_checked_shape_file(shape_file, set);
        std::vector<PrepareRow> r;
        {
            nb::gil_scoped_release release;
            r = engine->prepare(file.shape, file.kernels);
        }
        return rows(r);
    }

    nb::list prepare_specs(const std::vector<std::map<std::string, nb::object>>& kernels,
                           const std::map<std::string, std::int64_t>& shape) {
        std::vector<KernelSpec> specs;
        for (const auto& k : kernels) {
            KernelSpec s;
            for (const auto& [key, value] : k) {
                if (key == "name")
                    s.name = nb::cast<std::string>(value);
                else if (key == "source")
                    s.source = nb::cast<std::string>(value);
                else if (key == "defines")
                    for (auto [dk, dv] : nb::cast<nb::dict>(value))
                        s.defines[nb::cast<std::string>(nb::str(dk))] =
                            nb::cast<std::string>(nb::str(dv));
                else if (key == "fallback")
                    s.fallback = nb::cast<std::string>(value);
                else if (key == "instantiations")
                    s.instantiations = nb::cast<std::vector<std::string>>(value);
                else
                    throw ConfigError("a kernel takes name, source, defines, fallback and "
                                      "instantiations; not '" +
                                      key + "'");
            }
            if (s.name.empty())
                throw ConfigError("a kernel needs a name");
            if (s.source.empty())
                s.source = s.name;
            specs.push_back(std::move(s));
        }
        ModelShape m;
        m.values = shape;
        std::vector<PrepareRow> r;
        {
            nb::gil_scoped_release release;
            r = engine->prepare(m, specs);
        }
        return rows(r);
    }
};

} // namespace
} // namespace kjit::python

NB_MODULE(_kjit, m) {
    using namespace kjit;
    using namespace kjit::python;
    m.doc() = "kjit's C++ library: specialize, compile, cache and launch CUDA kernels";

    // The C++ hierarchy: a translator registered later is tried first, so bases go first.
    nb::exception<Error> error(m, "Error");
    nb::exception<ConfigError> config_error(m, "ConfigError", error);
    nb::exception<FlagError>(m, "FlagError", config_error);
    nb::exception<NotFoundError>(m, "NotFoundError", error);
    nb::exception<CompileError>(m, "CompileError", error);
    nb::exception<NvrtcError>(m, "NvrtcError", error);
    nb::exception<LaunchError>(m, "LaunchError", error);
    nb::exception<CudaError>(m, "CudaError", error);
    nb::exception<NoDeviceError>(m, "NoDeviceError", error);

    m.def("nvrtc_version", &nvrtc_version, "NVRTC's version as major*1000 + minor*10");
    m.def("supported_archs", &supported_archs, "the architectures this NVRTC compiles for");
    m.def(
        "device_available",
        [] {
            std::string why;
            const bool ok = device_available(&why);
            return nb::make_tuple(ok, why);
        },
        "(True, '') when a GPU can be used, else (False, why not)");
    m.def("compile", &compile_kernel, "kernel"_a,
          "defines"_a = std::map<std::string, std::string>{}, "arch"_a = "sm_90",
          "src"_a = nb::none(), "names"_a = std::vector<std::string>{}, "ptx"_a = false,
          "cache"_a = true,
          "Compiles one kernel through the compile cache (as `kjit compile`): a dict with the "
          "CUBIN, entry points and parameter types, cache key and origin.");

    m.def("lint", &lint_files, "paths"_a = std::vector<std::string>{}, "src"_a = nb::none(),
          "shapes"_a = std::vector<std::string>{}, "include_dirs"_a = std::vector<std::string>{},
          "archs"_a = std::vector<std::string>{}, "libclang"_a = "",
          "`kjit lint`: a dict with the findings (path, line, column, severity, message, rule, "
          "text), the notes on what was not checked, and the number of files.");

    m.def("_sweep_json", &sweep_file, "file"_a, "dry_run"_a = false, "src"_a = nb::none(),
          "arch"_a = nb::none(), "devices"_a = std::vector<int>{}, "seed"_a = 1,
          "no_cache"_a = false);
    m.def("_sig_json", &signatures_of, "paths"_a = std::vector<std::string>{}, "src"_a = nb::none(),
          "defines"_a = std::map<std::string, std::string>{},
          "include_dirs"_a = std::vector<std::string>{},
          "instantiations"_a = std::vector<std::string>{}, "libclang"_a = "");

    nb::class_<PyFunction>(m, "Function")
        .def_prop_ro("name", [](const PyFunction& f) { return f.function->name(); })
        .def_prop_ro("variant", [](const PyFunction& f) { return f.function->variant(); })
        .def_prop_ro("registers", [](const PyFunction& f) { return f.function->registers(); })
        .def_prop_ro("max_threads_per_block",
                     [](const PyFunction& f) { return f.function->max_threads_per_block(); })
        .def_prop_ro("param_types",
                     [](const PyFunction& f) {
                         nb::list out;
                         for (const ParamType& p : f.function->param_types())
                             out.append(param_dict(p));
                         return out;
                     })
        .def("__call__", &PyFunction::call, "grid"_a, "block"_a, "args"_a, "stream"_a = nb::none(),
             "smem"_a = 0u,
             "Launches on `stream` (default: torch's current stream when torch is imported, "
             "else the legacy default stream), the arguments typed by the kernel's parameters.");

    nb::class_<PyEngine>(m, "Engine")
        .def(nb::init<std::optional<int>, std::optional<std::string>, std::optional<std::string>,
                      std::optional<std::string>>(),
             "device"_a = nb::none(), "arch"_a = nb::none(), "src"_a = nb::none(),
             "cache_dir"_a = nb::none())
        .def_prop_ro("arch", [](const PyEngine& e) { return e.engine->arch(); })
        .def_prop_ro("sources", [](const PyEngine& e) { return e.sources.text; })
        .def_prop_ro("has_device", [](const PyEngine& e) { return e.context != nullptr; })
        .def("prepare_file", &PyEngine::prepare_file, "shape_file"_a)
        .def("check", &PyEngine::check, "name"_a, "entry"_a, "args"_a)
        .def("prepare_specs", &PyEngine::prepare_specs, "kernels"_a, "shape"_a)
        .def(
            "function",
            [](nb::handle self, const std::string& name, const std::string& entry) {
                PyEngine& e = nb::cast<PyEngine&>(self);
                if (!e.context)
                    throw NoDeviceError(NoDeviceError::Reason::no_device,
                                        "kjit.Engine without a device cannot launch (" +
                                            e.no_device + "): kjit.Engine(device=0)");
                return PyFunction{&e.engine->function(name, entry), e.context.get(),
                                  nb::borrow(self)};
            },
            "name"_a, "entry"_a);
}
