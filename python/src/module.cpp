// kjit's Python module: the C++ library bound with nanobind. Everything here calls the library
// (the verbs' own functions where a verb exists); nothing of it is re-implemented in Python.
#include "core/error.hpp"
#include "core/flags.hpp"
#include "core/names.hpp"
#include "jit/compile_cache.hpp"
#include "jit/compiler.hpp"
#include "jit/define_use.hpp"
#include "jit/error.hpp"
#include "jit/project.hpp"
#include "jit/shape_check.hpp"
#include "jit/shape_file.hpp"
#include "jit/source_choice.hpp"
#include "kernels/contract_toml.hpp"
#include "kernels/dtype.hpp"
#include "kernels/plan.hpp"
#include "kernels/registry.hpp"
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
#include "tuning/tune.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
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
    require_defines_read(set, set.kernel(kernel), defines, "kjit.compile's defines");
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

/// kjit.plan: contract `name` evaluated at `shape`, `dtype` (default: the contract's first),
/// `defines` over the contract's and `launch` over its launch parameters' defaults, as every
/// verb plans a case (plan_case): each step's entry point, grid, block, dynamic shared memory
/// and parameters by argument name, the defines and launch values it resolved, the buffers'
/// element counts and the scalars' values. A failed precondition, a dtype the contract lacks or
/// a shape key it does not have is a ConfigError, as is a define the contract's kernel source
/// (in `src`, as kjit.compile's, else the default sources) never reads. The project's contract
/// files are registered first, as every verb does.
nb::dict plan_contract(const std::string& name, const ShapeValues& shape,
                       const std::optional<std::string>& dtype, const Defines& defines,
                       const LaunchValues& launch, const std::optional<std::string>& src) {
    if (const std::optional<Project> project = Project::discover())
        (void)register_project_contracts(*project);
    const KernelContract* found = find_contract(name);
    if (!found) {
        std::string known;
        for (const KernelContract* c : kernel_contracts())
            known += (known.empty() ? "" : ", ") + c->name;
        throw NotFoundError("no contract '" + name + "' (known: " + known +
                            "; a project's contract files come from the kjit.toml found from "
                            "the working directory)");
    }
    const KernelContract& c = *found;
    for (const auto& [k, v] : shape)
        if (std::find(c.shape_keys.begin(), c.shape_keys.end(), k) == c.shape_keys.end()) {
            throw ConfigError("contract " + name + ": no shape key '" + k + "' (its keys: " +
                              join(c.shape_keys) + ")");
        }
    // A define the kernel never reads (or #defines again) would plan a launch of another kernel.
    if (!defines.empty()) {
        const SourceSet set = sources_of(src).load();
        require_defines_read(set, set.kernel(c.source_name()), defines, "kjit.plan's defines");
    }
    const CasePlan p = plan_case(c, shape, dtype ? parse_dtype(*dtype) : c.dtypes.front(),
                                 defines, launch);
    const auto dim = [](const Dim3& d) { return nb::make_tuple(d.x, d.y, d.z); };
    nb::list steps;
    for (const StepPlan& s : p.steps) {
        nb::dict step;
        if (s.kind == PipelineStep::Kind::copy) {
            step["kind"] = "copy";
            step["from"] = p.buffers[s.from].name;
            step["to"] = p.buffers[s.to].name;
        } else {
            nb::list params;
            for (const ParamRef& r : s.params)
                params.append(r.scalar ? p.scalars[r.index].name : p.buffers[r.index].name);
            step["kind"] = "launch";
            step["entry"] = s.entry;
            step["grid"] = dim(s.grid);
            step["block"] = dim(s.block);
            step["smem"] = s.smem;
            step["params"] = params;
            step["main"] = &s == &p.main_launch();
        }
        steps.append(step);
    }
    nb::dict buffers, scalars;
    for (const BufferSpec& b : p.buffers) {
        nb::dict d;
        d["dtype"] = std::string(dtype_name(b.dtype));
        d["count"] = b.count;
        d["role"] = std::string(arg_role_name(b.role));
        buffers[b.name.c_str()] = d;
    }
    for (const ScalarSpec& v : p.scalars) {
        if (v.type == ArgType::f32 || v.type == ArgType::f64)
            scalars[v.name.c_str()] = v.value;
        else
            scalars[v.name.c_str()] = static_cast<long long>(v.value);
    }
    nb::dict out;
    out["contract"] = p.kernel;
    out["source"] = p.source;
    out["dtype"] = std::string(dtype_name(p.dtype));
    out["shape"] = p.shape;
    out["defines"] = p.defines;
    out["launch"] = p.launch;
    out["steps"] = steps;
    out["buffers"] = buffers;
    out["scalars"] = scalars;
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

/// kjit.tune: `kjit tune KERNEL --shapes ...` (plan_tune, then run_tune): one dict per shape,
/// its sweep as sweep.json holds it and the entry recorded in the table.
nb::list tune_shapes(const std::string& kernel, const std::vector<std::string>& shapes,
                     const std::string& sweep, const std::string& table, const std::string& dtype,
                     const std::optional<std::string>& src, int device, std::uint64_t seed,
                     bool no_cache) {
    const std::optional<Project> project = Project::discover();
    if (project)
        (void)register_project_contracts(*project);
    TunePlan plan = plan_tune({kernel, shapes, sweep, table, dtype}, project ? &*project : nullptr);
    SweepOptions o;
    o.no_cache = no_cache;
    o.seed = seed;
    o.devices = {device};
    o.sources = sources_of(src);
    require_sources_on_disk(*o.sources, "kjit.tune");
    std::vector<TunedShape> tuned;
    {
        nb::gil_scoped_release release;
        tuned = run_tune(plan, o);
    }
    nb::module_ json = nb::module_::import_("json");
    nb::list out;
    for (const TunedShape& t : tuned) {
        nb::dict d;
        d["shape"] = t.shape;
        d["failed"] = t.failed;
        d["defines"] = t.entry.defines;
        d["median_us"] = t.entry.median_us;
        d["baseline_us"] = t.entry.baseline_us;
        d["gpu"] = t.entry.gpu;
        d["arch"] = t.entry.arch;
        d["dtype"] = t.entry.dtype;
        d["note"] = t.note;
        d["sweep"] = json.attr("loads")(sweep_json(plan.spec, t.result));
        out.append(d);
    }
    return out;
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
    d["define_values"] = r.define_values;
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

/// A few elements in place, more on the heap: a launch's arguments without an allocation.
template <class T, std::size_t N> class SmallVec {
  public:
    void push_back(const T& v) {
        if (n_ < N && heap_.empty()) {
            inline_[n_++] = v;
            return;
        }
        if (heap_.empty())
            heap_.assign(inline_.begin(), inline_.begin() + n_);
        heap_.push_back(v);
        ++n_;
    }
    T& operator[](std::size_t i) { return data()[i]; }
    T* data() { return heap_.empty() ? inline_.data() : heap_.data(); }
    const T* data() const { return heap_.empty() ? inline_.data() : heap_.data(); }
    [[nodiscard]] std::size_t size() const { return n_; }
    [[nodiscard]] std::span<const T> span() const { return {data(), n_}; }

  private:
    std::array<T, N> inline_{};
    std::vector<T> heap_;
    std::size_t n_ = 0;
};

/// One launch's arguments as the kernel's parameters: a scalar or pointer in an 8-byte word of
/// its own (its bytes first), an aggregate from `bytes` in a buffer of its own.
struct PackedArgs {
    PackedArgs() = default;
    PackedArgs(const PackedArgs&) = delete; // `pointers` points into this object
    PackedArgs& operator=(const PackedArgs&) = delete;
    static constexpr std::size_t kInline = 16;
    SmallVec<std::uint64_t, kInline> words;
    std::vector<std::string> blobs;
    SmallVec<std::int32_t, kInline> where; ///< >= 0: index in words; < 0: -1 - index in blobs
    SmallVec<std::size_t, kInline> sizes, aligns;
    SmallVec<ArgKind, kInline> kinds;
    SmallVec<void*, kInline> pointers;

    template <class T> void put(T value, ArgKind kind) {
        static_assert(sizeof(T) <= sizeof(std::uint64_t));
        std::uint64_t word = 0;
        std::memcpy(&word, &value, sizeof(T));
        where.push_back(static_cast<std::int32_t>(words.size()));
        words.push_back(word);
        sizes.push_back(sizeof(T));
        aligns.push_back(alignof(T));
        kinds.push_back(kind);
    }
    void put_bytes(std::string bytes, std::size_t align) {
        where.push_back(-1 - static_cast<std::int32_t>(blobs.size()));
        sizes.push_back(bytes.size());
        aligns.push_back(align);
        kinds.push_back(ArgKind::other);
        blobs.push_back(std::move(bytes));
    }
    /// The parameter pointers cuLaunchKernel reads (valid while this lives, unchanged).
    void finish() {
        for (std::size_t i = 0; i < where.size(); ++i)
            pointers.push_back(where[i] >= 0 ? static_cast<void*>(&words[where[i]])
                                             : static_cast<void*>(blobs[-1 - where[i]].data()));
    }
};

/// A Python string made once and kept (interned: a dict lookup by it hashes nothing).
PyObject* interned(const char* text) {
    return PyUnicode_InternFromString(text);
}

/// sys.modules[name] without importing it (borrowed; nullptr when it is not imported).
PyObject* imported(PyObject* name) {
    return PyDict_GetItem(PyImport_GetModuleDict(), name);
}

/// `owner.a.b...` as a new reference, or nullptr (the error cleared) when one is missing.
PyObject* lookup(PyObject* owner, std::initializer_list<const char*> path) {
    Py_INCREF(owner);
    for (const char* name : path) {
        PyObject* next = PyObject_GetAttrString(owner, name);
        Py_DECREF(owner);
        if (!next) {
            PyErr_Clear();
            return nullptr;
        }
        owner = next;
    }
    return owner;
}

/// lookup() of a type object; nullptr when it is missing or no type.
PyObject* type(PyObject* owner, std::initializer_list<const char*> path) {
    PyObject* t = lookup(owner, path);
    if (t && !PyType_Check(t)) {
        Py_DECREF(t);
        return nullptr;
    }
    return t;
}

/// What the launch path needs of torch, CuPy and NumPy, looked up once each of them is
/// imported (kjit imports none of them): their array and scalar types and how to ask each for
/// its current stream. The references are kept for the life of the process.
struct Interop {
    PyObject* torch = nullptr;      ///< the module the torch entries were read from
    PyObject* tensor = nullptr;     ///< torch.Tensor
    PyObject* raw_stream = nullptr; ///< torch._C._cuda_getCurrentRawStream (none without CUDA)
    PyObject* cupy = nullptr;
    PyObject* ndarray = nullptr;         ///< cupy.ndarray
    PyObject* cupy_stream = nullptr;     ///< cupy.cuda.get_current_stream
    PyObject* cupy_stream_ptr = nullptr; ///< cupy.cuda.stream.get_current_stream_ptr, if any
    PyObject* numpy = nullptr;
    PyObject* np_integer = nullptr; ///< numpy.integer
    PyObject* np_bool = nullptr;    ///< numpy.bool_
    PyObject* np_floating = nullptr;

    /// Reads a module's entries the first time it is complete in sys.modules (a module still
    /// being imported is looked at again on the next call); once read, a module is not looked
    /// up again (a launch with all three imported costs no lookup; a reloaded module keeps the
    /// types it had).
    void refresh() {
        static PyObject* const torch_name = interned("torch");
        if (PyObject* m = torch ? nullptr : imported(torch_name)) {
            if (PyObject* t = type(m, {"Tensor"})) {
                // torch's stream only from a torch that can use CUDA (a CUDA build on a host
                // whose driver it cannot use has the function and fails in it).
                PyObject* raw = nullptr;
                if (const nb::object available = nb::steal(lookup(m, {"cuda", "is_available"}));
                    available.is_valid()) {
                    PyObject* yes = PyObject_CallNoArgs(available.ptr());
                    if (yes && PyObject_IsTrue(yes) == 1)
                        raw = lookup(m, {"_C", "_cuda_getCurrentRawStream"});
                    Py_XDECREF(yes);
                    PyErr_Clear();
                }
                tensor = t;
                raw_stream = raw;
                torch = m; // last: the lookups above may run Python and let another thread in
            }
        }
        static PyObject* const cupy_name = interned("cupy");
        if (PyObject* m = cupy ? nullptr : imported(cupy_name)) {
            PyObject* a = type(m, {"ndarray"});
            PyObject* s = lookup(m, {"cuda", "get_current_stream"});
            if (a && s) {
                ndarray = a;
                cupy_stream = s;
                cupy_stream_ptr = lookup(m, {"cuda", "stream", "get_current_stream_ptr"});
                cupy = m;
            } else {
                Py_XDECREF(a);
                Py_XDECREF(s);
            }
        }
        static PyObject* const numpy_name = interned("numpy");
        if (PyObject* m = numpy ? nullptr : imported(numpy_name)) {
            PyObject* i = type(m, {"integer"});
            PyObject* b = type(m, {"bool_"});
            PyObject* f = type(m, {"floating"});
            if (i && b && f) {
                np_integer = i;
                np_bool = b;
                np_floating = f;
                numpy = m;
            } else {
                Py_XDECREF(i);
                Py_XDECREF(b);
                Py_XDECREF(f);
            }
        }
    }
    [[nodiscard]] static bool is(PyObject* v, PyObject* type) {
        return type && PyObject_TypeCheck(v, reinterpret_cast<PyTypeObject*>(type));
    }
};

Interop& interop() {
    static Interop* i = new Interop; // never destroyed: it outlives the interpreter's teardown
    i->refresh();
    return *i;
}

std::string python_type_name(nb::handle v) {
    return nb::cast<std::string>(v.type().attr("__name__"));
}

/// What a launch makes of one Python argument.
enum class Arg { integer, floating, bytes, pointer, host, none_of_them };

/// The device pointer of an array: a torch tensor's data_ptr(), a CuPy array's data.ptr, else
/// `__cuda_array_interface__`, a `data_ptr()` of a CUDA tensor, or DLPack (`__dlpack__`) on a
/// CUDA device (`generic`: false looks at torch and CuPy arrays only). Arg::host for an array
/// in host memory (a torch CPU tensor's data_ptr() or a NumPy array is no device address).
Arg device_pointer(const Interop& i, nb::handle v, std::uint64_t& ptr, bool& cupy_array,
                   bool generic) {
    static PyObject* const is_cuda = interned("is_cuda");
    static PyObject* const data_ptr = interned("data_ptr");
    static PyObject* const data = interned("data");
    static PyObject* const ptr_name = interned("ptr");
    const auto cuda_tensor = [&]() -> Arg {
        if (!nb::cast<bool>(v.attr(is_cuda)))
            return Arg::host;
        ptr = nb::cast<std::uint64_t>(v.attr(data_ptr)());
        return Arg::pointer;
    };
    if (Interop::is(v.ptr(), i.tensor))
        return cuda_tensor();
    if (Interop::is(v.ptr(), i.ndarray)) {
        cupy_array = true;
        ptr = nb::cast<std::uint64_t>(v.attr(data).attr(ptr_name));
        return Arg::pointer;
    }
    if (!generic)
        return Arg::none_of_them;
    if (nb::hasattr(v, "__cuda_array_interface__")) {
        nb::dict cai = nb::cast<nb::dict>(v.attr("__cuda_array_interface__"));
        ptr = nb::cast<std::uint64_t>(nb::cast<nb::tuple>(cai["data"])[0]);
        return Arg::pointer;
    }
    if (nb::hasattr(v, "data_ptr")) {
        if (nb::hasattr(v, "is_cuda"))
            return cuda_tensor();
        ptr = nb::cast<std::uint64_t>(v.attr("data_ptr")());
        return Arg::pointer;
    }
    if (nb::hasattr(v, "__dlpack__")) {
        nb::ndarray<> a;
        if (nb::try_cast(v, a, false)) {
            if (a.device_type() != nb::device::cuda::value &&
                a.device_type() != nb::device::cuda_managed::value)
                return Arg::host;
            ptr = reinterpret_cast<std::uintptr_t>(a.data());
            return Arg::pointer;
        }
    }
    return Arg::none_of_them;
}

/// A tuple's items, from `first` on.
std::span<PyObject* const> items_of(nb::handle tuple, std::size_t first = 0) {
    const auto n = static_cast<std::size_t>(PyTuple_GET_SIZE(tuple.ptr()));
    return {&PyTuple_GET_ITEM(tuple.ptr(), 0) + std::min(first, n), n - std::min(first, n)};
}

/// Converts `args` to the kernel's parameters: an array (a torch tensor, a CuPy array,
/// `__cuda_array_interface__`, DLPack) or None is a pointer, an int (a NumPy integer or bool
/// too) an integer of its parameter's size, a float (a NumPy float too) a float of its
/// parameter's size, bytes an aggregate. Then the C++ launch's own rule (param_mismatch:
/// count, and each kind and size) judges them on every call; LaunchError names the parameter.
/// `cupy_array` says whether an argument was a CuPy array (what the default stream follows).
void pack(const Interop& in, const std::string& kernel, const std::vector<ParamType>& params,
          std::span<PyObject* const> args, PackedArgs& out, bool* cupy_array = nullptr) {
    bool any_cupy = false;
    const auto refuse = [&](const std::string& problem) {
        throw LaunchError("kjit launch", CUDA_SUCCESS, kernel, "kernel=" + kernel, problem);
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        nb::handle v = args[i];
        const ParamType* p = i < params.size() ? &params[i] : nullptr;
        const auto sized = [&](ParamKind kind, std::size_t fallback) {
            return p && p->kind == kind ? p->size : fallback;
        };
        PyObject* o = v.ptr();
        if (o == Py_None) { // a null pointer
            out.put(std::uint64_t{0}, ArgKind::pointer);
            continue;
        }
        // The common kinds first: a Python int or float, a torch or CuPy array.
        const bool is_long = PyLong_Check(o), is_float = !is_long && PyFloat_Check(o);
        std::uint64_t ptr = 0;
        if (!is_long && !is_float && device_pointer(in, v, ptr, any_cupy, false) == Arg::pointer) {
            out.put(ptr, ArgKind::pointer);
            continue;
        }
        const bool np_bool = !is_long && !is_float && Interop::is(o, in.np_bool);
        if (is_long || np_bool || Interop::is(o, in.np_integer)) { // bool too, as C++
            // counts it; numpy.bool_ has no __index__
            const nb::object number =
                nb::steal(np_bool ? PyBool_FromLong(PyObject_IsTrue(o)) : PyNumber_Index(o));
            if (!number.is_valid())
                throw nb::python_error();
            int overflow = 0;
            std::int64_t x = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
            if (overflow > 0) { // 2^63 .. 2^64 - 1: the same 64 bits
                x = static_cast<std::int64_t>(PyLong_AsUnsignedLongLong(number.ptr()));
                if (PyErr_Occurred()) {
                    PyErr_Clear();
                    overflow = 2;
                } else {
                    overflow = 0;
                }
            }
            if (overflow)
                refuse("argument " + std::to_string(i + 1) + " does not fit 64 bits");
            const std::size_t size = sized(ParamKind::integer, 8);
            if (size < 8 &&
                (x < -(std::int64_t{1} << (8 * size - 1)) || x >= (std::int64_t{1} << (8 * size))))
                refuse("argument " + std::to_string(i + 1) + " (" + std::to_string(x) +
                       ") does not fit the kernel's parameter " + std::to_string(i + 1) + ", " +
                       with_article(p->describe()));
            const auto bits = static_cast<std::uint64_t>(x);
            switch (size) {
            case 1:
                out.put(static_cast<std::uint8_t>(bits), ArgKind::integer);
                break;
            case 2:
                out.put(static_cast<std::uint16_t>(bits), ArgKind::integer);
                break;
            case 4:
                out.put(static_cast<std::uint32_t>(bits), ArgKind::integer);
                break;
            default:
                out.put(bits, ArgKind::integer);
                break;
            }
        } else if (is_float || Interop::is(o, in.np_floating)) {
            const double x = PyFloat_AsDouble(o);
            if (x == -1.0 && PyErr_Occurred())
                throw nb::python_error();
            if (sized(ParamKind::floating, 8) == 4)
                out.put(static_cast<float>(x), ArgKind::floating);
            else
                out.put(x, ArgKind::floating);
        } else if (PyBytes_Check(o)) {
            const auto b = nb::borrow<nb::bytes>(v);
            out.put_bytes(std::string(b.c_str(), b.size()), p && p->align ? p->align : 1);
        } else {
            switch (device_pointer(in, v, ptr, any_cupy, true)) {
            case Arg::pointer:
                out.put(ptr, ArgKind::pointer);
                break;
            case Arg::host:
                refuse("argument " + std::to_string(i + 1) + " (" + python_type_name(v) +
                       ") is in host memory: a kernel takes device arrays");
                break;
            default:
                refuse("argument " + std::to_string(i + 1) + " (" + python_type_name(v) +
                       ") is no device array: a kernel takes device arrays (a torch tensor, a CuPy "
                       "array, "
                       "__cuda_array_interface__ or DLPack on a CUDA device), None, int, float "
                       "or bytes");
            }
        }
    }
    if (params.empty() && args.size() != 0)
        refuse("kjit has no parameter types for this entry point (a cache entry written without "
               "them): `kjit cache clear` and prepare again");
    if (const std::string problem = param_mismatch(params, out.sizes.span(), out.kinds.span());
        !problem.empty())
        refuse(problem);
    out.finish();
    if (cupy_array)
        *cupy_array = any_cupy;
}

/// A non-negative integer (an int, a NumPy integer: anything with __index__) of at most
/// `max`; ConfigError naming `what` otherwise.
std::uint64_t whole_number(PyObject* v, std::uint64_t max, const char* what) {
    if (PyLong_CheckExact(v)) { // the common case, without a new reference
        const unsigned long long x = PyLong_AsUnsignedLongLong(v);
        if (!PyErr_Occurred() && x <= max)
            return x;
        PyErr_Clear();
    }
    const nb::object number = nb::steal(PyNumber_Index(v));
    const unsigned long long x =
        number.is_valid() ? PyLong_AsUnsignedLongLong(number.ptr()) : ~0ull;
    if (PyErr_Occurred()) {
        PyErr_Clear();
        throw ConfigError(std::string(what) + " must be a non-negative int, not " +
                          nb::cast<std::string>(nb::repr(nb::handle(v))));
    }
    if (x > max)
        throw ConfigError(std::string(what) + " of " + std::to_string(x) + " is over " +
                          std::to_string(max));
    return x;
}

unsigned dim_of(PyObject* v) {
    return static_cast<unsigned>(whole_number(v, 0xFFFF'FFFFu, "a grid or block dimension"));
}

Dim3 dim3_of(nb::handle v) {
    if (!PyTuple_Check(v.ptr()) && !PyList_Check(v.ptr()))
        return {dim_of(v.ptr()), 1, 1};
    const nb::tuple t = nb::tuple(v);
    if (t.size() == 0 || t.size() > 3)
        throw ConfigError("a grid or block is an int or a tuple of 1 to 3 ints");
    Dim3 d{1, 1, 1};
    d.x = dim_of(t[0].ptr());
    if (t.size() > 1)
        d.y = dim_of(t[1].ptr());
    if (t.size() > 2)
        d.z = dim_of(t[2].ptr());
    return d;
}

/// The stream a launch goes to: an int handle, an object with `cuda_stream` (torch) or `ptr`
/// (CuPy). By default CuPy's current stream when an argument is a CuPy array, else torch's
/// current stream of the function's device when a torch with CUDA is imported, else CuPy's
/// when CuPy is imported, else the legacy default stream.
CUstream stream_of(const Interop& in, nb::handle s, int device, bool cupy_array) {
    const auto handle = [](nb::handle v) {
        return reinterpret_cast<CUstream>(whole_number(v.ptr(), UINTPTR_MAX, "a stream handle"));
    };
    if (s.is_none()) {
        const auto cupy = [&] {
            return handle(in.cupy_stream_ptr ? nb::handle(in.cupy_stream_ptr)()
                                             : nb::handle(in.cupy_stream)().attr("ptr"));
        };
        if (cupy_array && in.cupy_stream)
            return cupy();
        if (in.raw_stream)
            return handle(nb::handle(in.raw_stream)(device));
        if (in.cupy_stream)
            return cupy();
        return nullptr;
    }
    if (PyIndex_Check(s.ptr()))
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

    void call(nb::handle grid, nb::handle block, std::span<PyObject* const> args, nb::handle stream,
              unsigned smem) const {
        // The context is current on the thread that made the engine; any thread may launch.
        context->make_current();
        LaunchConfig config;
        config.grid = dim3_of(grid);
        config.block = dim3_of(block);
        config.smem_bytes = smem;
        bool cupy_array = false;
        PackedArgs packed;
        const Interop& in = interop();
        pack(in, function->name(), function->param_types(), args, packed, &cupy_array);
        config.stream = stream_of(in, stream, function->device_ordinal(), cupy_array);
        // The arguments were converted by the parameter types, so one token serves them all.
        static const char token = 0;
        function->launch_packed(config, packed.pointers.data(), packed.sizes.span(),
                                packed.aligns.span(), &token, packed.kinds.span());
    }
};

/// A nanobind function that rethrows the C++ exception it is given, so that an error raised
/// outside nanobind's dispatch (function_call) reaches Python through the same translators.
std::exception_ptr& pending_error() {
    thread_local std::exception_ptr e;
    return e;
}
PyObject* g_rethrow = nullptr; ///< kjit._kjit._rethrow

/// fn(grid, block, *args, stream=None, smem=0): Function's tp_call, parsed by hand. A launch
/// is the path a decode loop calls thousands of times a second; nanobind's general dispatch
/// of *args and keywords costs more than the rest of the Python side together.
PyObject* function_call(PyObject* self, PyObject* args, PyObject* kwargs) noexcept {
    try {
        const Py_ssize_t n = PyTuple_GET_SIZE(args);
        if (n < 2)
            throw ConfigError("a launch is fn(grid, block, *args, stream=None, smem=0)");
        nb::handle stream = nb::none();
        unsigned smem = 0;
        if (kwargs) {
            PyObject* key = nullptr;
            PyObject* value = nullptr;
            Py_ssize_t pos = 0;
            while (PyDict_Next(kwargs, &pos, &key, &value)) {
                const std::string k = nb::cast<std::string>(nb::handle(key));
                if (k == "stream")
                    stream = value;
                else if (k == "smem")
                    smem = static_cast<unsigned>(whole_number(value, 0xFFFF'FFFFu, "smem"));
                else
                    throw ConfigError("a launch is fn(grid, block, *args, stream=None, smem=0): "
                                      "no keyword '" +
                                      k + "'");
            }
        }
        nb::inst_ptr<PyFunction>(self)->call(PyTuple_GET_ITEM(args, 0), PyTuple_GET_ITEM(args, 1),
                                             items_of(args, 2), stream, smem);
        Py_RETURN_NONE;
    } catch (nb::python_error& e) {
        e.restore();
        return nullptr;
    } catch (...) {
        pending_error() = std::current_exception();
        PyObject* r = PyObject_CallNoArgs(g_rethrow); // sets the translated Python error
        Py_XDECREF(r);
        return nullptr;
    }
}

PyType_Slot function_slots[] = {{Py_tp_call, reinterpret_cast<void*>(function_call)}, {0, nullptr}};

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
        PackedArgs packed;
        pack(interop(), entry, e->params, items_of(args), packed);
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

    m.def("plan", &plan_contract, "contract"_a, "shape"_a, "dtype"_a = nb::none(),
          "defines"_a = std::map<std::string, std::string>{},
          "launch"_a = std::map<std::string, long long>{}, "src"_a = nb::none(),
          "A contract evaluated at a shape, dtype and define set, as the verbs plan a case: each "
          "step's entry point, grid, block, shared memory and parameters by name, the defines "
          "and launch values, buffers and scalars.");
    m.def("_sweep_json", &sweep_file, "file"_a, "dry_run"_a = false, "src"_a = nb::none(),
          "arch"_a = nb::none(), "devices"_a = std::vector<int>{}, "seed"_a = 1,
          "no_cache"_a = false);
    m.def("tune", &tune_shapes, "kernel"_a, "shapes"_a, "sweep"_a = "", "table"_a = "",
          "dtype"_a = "", "src"_a = nb::none(), "device"_a = 0, "seed"_a = 1, "no_cache"_a = false,
          "`kjit tune KERNEL`: the sweep at each shape (\"rows=1,n=4096\"), each winner recorded "
          "in the tuned table (table=, else the project file's `tuned`); one dict per shape with "
          "the recorded defines, medians, note and the sweep as sweep.json holds it.");
    m.def("_sig_json", &signatures_of, "paths"_a = std::vector<std::string>{}, "src"_a = nb::none(),
          "defines"_a = std::map<std::string, std::string>{},
          "include_dirs"_a = std::vector<std::string>{},
          "instantiations"_a = std::vector<std::string>{}, "libclang"_a = "");

    m.def("_rethrow", [] {
        const std::exception_ptr e = std::exchange(pending_error(), nullptr);
        if (e)
            std::rethrow_exception(e);
    });
    g_rethrow = m.attr("_rethrow").ptr();
    Py_INCREF(g_rethrow);

    nb::class_<PyFunction>(m, "Function", nb::type_slots(function_slots),
                           "An entry point of a prepared kernel. fn(grid, block, *args, "
                           "stream=None, smem=0) launches it on `stream` (default: CuPy's current "
                           "stream when an argument is a CuPy array, else torch's current stream "
                           "when a torch that can use CUDA is imported, else CuPy's, else the "
                           "legacy default stream), "
                           "the arguments typed by the kernel's parameters.")
        .def_prop_ro("name", [](const PyFunction& f) { return f.function->name(); })
        .def_prop_ro("variant", [](const PyFunction& f) { return f.function->variant(); })
        .def_prop_ro("registers", [](const PyFunction& f) { return f.function->registers(); })
        .def_prop_ro("max_threads_per_block",
                     [](const PyFunction& f) { return f.function->max_threads_per_block(); })
        .def(
            "_raw_launches",
            [](const PyFunction& f, nb::handle grid, nb::handle block, const nb::args& args,
               unsigned count) {
                // The floor a Python launch is measured against: `count` raw cuLaunchKernel
                // calls from C++ in this process, the arguments packed once, nothing checked.
                f.context->make_current();
                PackedArgs packed;
                bool cupy_array = false;
                const Interop& in = interop();
                pack(in, f.function->name(), f.function->param_types(), items_of(args), packed,
                     &cupy_array);
                const Dim3 g = dim3_of(grid), b = dim3_of(block);
                const CUstream s =
                    stream_of(in, nb::none(), f.function->device_ordinal(), cupy_array);
                for (unsigned i = 0; i < count; ++i)
                    check(driver().cuLaunchKernel(f.function->handle(), g.x, g.y, g.z, b.x, b.y,
                                                  b.z, 0, s, packed.pointers.data(), nullptr),
                          "cuLaunchKernel");
            },
            "grid"_a, "block"_a, "args"_a, "count"_a = 1000u,
            "Benchmarks only: `count` raw cuLaunchKernel calls from C++ with these arguments on "
            "the default stream fn() would take, nothing checked (the floor of a launch from "
            "Python, measured in the same process).")
        .def_prop_ro("param_types", [](const PyFunction& f) {
            nb::list out;
            for (const ParamType& p : f.function->param_types())
                out.append(param_dict(p));
            return out;
        });

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
