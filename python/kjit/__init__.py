"""kjit: runtime-compiled CUDA kernels, specialized for a model's shape at start-up.

    import kjit
    engine = kjit.Engine()                       # device 0 when there is one, else compile-only
    row = engine.prepare("kernel_src/model.toml")[0]  # or engine.prepare(kernels, shape={...})
    fn = engine.function("rms_norm", "rms_norm_f32")
    step = kjit.plan("rms_norm", {"rows": rows, "n": n}, "f32", row["define_values"])["steps"][0]
    fn(step["grid"], step["block"], x, w, y, rows, n, 1e-6)  # torch or CuPy arrays, their stream

Every function calls kjit's C++ library (the extension module kjit._kjit); errors are the C++
ones: kjit.Error and its subclasses ConfigError (file:line:col of the bad input), FlagError,
NotFoundError, CompileError, NvrtcError, LaunchError, CudaError and NoDeviceError.
"""
def _extension_for_another_python():
    """The ImportError to raise when the extension here was built for another interpreter."""
    import glob, importlib.machinery, os, sys, sysconfig
    built = glob.glob(os.path.join(os.path.dirname(__file__), "_kjit*.so"))
    want = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    loads = importlib.machinery.EXTENSION_SUFFIXES  # .cpython-312-..., .abi3.so, .so
    if built and not any(os.path.basename(b) == "_kjit" + s for b in built for s in loads):
        names = ", ".join(os.path.basename(b) for b in built)
        return ImportError(f"kjit's extension here is {names}, built for another Python; this "
                           f"is Python {sys.version.split()[0]} (it loads *{want}): run it with "
                           f"the python3 the build used, or rebuild with this one on PATH")
    return None


try:
    from . import _kjit
except ImportError as _e:
    _other = _extension_for_another_python()
    if _other:
        raise _other from _e
    raise
from ._kjit import (CompileError, ConfigError, CudaError, Error, FlagError, Function,
                    LaunchError, NoDeviceError, NotFoundError, NvrtcError, compile,
                    device_available, lint, nvrtc_version, supported_archs)
from ._kjit import plan as _plan
from ._kjit import Engine as _Engine
from ._kjit import _sig_json, _sweep_json
from ._kjit import tune as _tune

import json as _json
import operator as _operator
import os as _os

__all__ = ["Engine", "Function", "compile", "device_available", "lint", "plan", "sig", "sweep",
           "tune", "nvrtc_version",
           "supported_archs", "Error", "ConfigError", "FlagError", "NotFoundError",
           "CompileError", "NvrtcError", "LaunchError", "CudaError", "NoDeviceError"]
__version__ = "0.1.0"


class Engine:
    """Specializes kernels for a shape and hands out their entry points.

    device: an ordinal; "auto" (the default) takes device 0 when a GPU can be used and
    otherwise compiles and caches without loading (function() then raises NoDeviceError);
    None never touches the driver. arch: the target ("sm_90"; default: the device's).
    src: a kernel directory (default: KJIT_KERNEL_DIR, the project file kjit.toml found from
    the working directory, else kjit's embedded kernels). cache_dir: the disk cache
    (default: KJIT_CACHE_DIR or ~/.cache/kjit).
    """

    def __init__(self, device="auto", arch=None, src=None, cache_dir=None):
        if device == "auto":
            device = 0 if device_available()[0] else None
        self.src = None if src is None else str(src)  # as given: kjit.plan(..., src=)
        self._engine = _Engine(device, arch, self.src,
                               None if cache_dir is None else str(cache_dir))

    @property
    def arch(self):
        return self._engine.arch

    @property
    def sources(self):
        """Where the sources come from, as the verbs print it (`embedded`, `--src k/`)."""
        return self._engine.sources

    @property
    def has_device(self):
        return self._engine.has_device

    def prepare(self, kernels, shape=None):
        """Compiles (or reads from the cache) and loads every kernel; one dict per kernel
        (name, source, defines as printed, define_values as a dict for kjit.plan, key, origin,
        compile_ms, tuned, entries, error, ...).

        kernels: a shape file's path (its [shape] and [[kernel]] tables, tuned table and all),
        or a list of dicts with name, source, defines, fallback, instantiations, with `shape`
        the model shape's integers."""
        if isinstance(kernels, (str, bytes)) or hasattr(kernels, "__fspath__"):
            if shape is not None:
                raise ConfigError("a shape file carries its own [shape]: pass shape= with a "
                                  "list of kernels")
            return self._engine.prepare_file(_os.fsdecode(kernels))
        return self._engine.prepare_specs([dict(k) for k in kernels], dict(shape or {}))

    def check(self, name, entry, *args):
        """The launch check of fn(grid, block, *args) without launching (no GPU needed):
        LaunchError when an argument does not fit its parameter (a float for an int, a
        count that differs, an object that is no array)."""
        self._engine.check(name, entry, *args)

    def function(self, name, entry):
        """The entry point `entry` of prepared kernel `name`, callable as
        fn(grid, block, *args, stream=None, smem=0): on `stream`, else CuPy's current stream
        when an argument is a CuPy array, else torch's current stream when a torch that can use
        CUDA is imported, else CuPy's, else the legacy default stream."""
        return self._engine.function(name, entry)


def plan(contract, shape, dtype=None, defines=None, launch=None, src=None):
    """The launches of `contract` (a registered contract, or one of the project file's contract
    files) at `shape` ({"rows": 8192, "n": 7168}), in `dtype` (default: the contract's first),
    with `defines` over the contract's defaults (a dict; a prepare() row's "define_values": the
    define set the kernel was compiled with) and `launch` over its launch parameters' defaults:
    what every verb launches for that case, no GPU needed. A dict: steps (each a launch with
    entry, grid, block, smem, params by argument name and main, or a copy with from and to),
    contract, source, dtype, shape, defines, launch, buffers ({name: dtype, count, role}) and
    scalars ({name: value}). ConfigError for a failed precondition (the case the kernel cannot
    run), a define the kernel source never reads (the source in `src`, a kernel directory as
    for Engine; default: the default sources), a dtype the contract lacks, a shape key it
    does not have or a value that is no
    integer; NotFoundError for an unknown contract."""
    def integers(what, values):
        if not hasattr(values, "items"):
            raise ConfigError(f"kjit.plan: {what} must be a dict of integers, not {values!r}")
        out = {}
        for k, v in values.items():
            try:
                out[k] = _operator.index(v)  # ints, bools, NumPy integers; never 2.5 -> 2
            except TypeError:
                raise ConfigError(f"kjit.plan: {what} {k}={v!r} is not an integer") from None
            if not -2**63 <= out[k] < 2**63:
                raise ConfigError(f"kjit.plan: {what} {k}={v!r} does not fit 64 bits")
        return out
    if defines is not None and not hasattr(defines, "items"):
        raise ConfigError(f"kjit.plan: defines must be a dict (a prepare() row's "
                          f"\"define_values\"), not {defines!r}")
    return _plan(contract, integers("shape", shape), dtype,
                 {k: str(v) for k, v in (defines or {}).items()},
                 integers("launch", launch or {}), None if src is None else str(src))


def sweep(file, dry_run=False, src=None, arch=None, devices=None, seed=1, no_cache=False,
          frame=False):
    """`kjit sweep FILE`: every variant compiled (dry_run: only that, no GPU needed) and, on
    a GPU, launched, checked and timed. A dict as sweep.json holds it (kernel, provenance,
    search, copy_gbps, rows: one dict per variant); frame=True gives the rows as a pandas
    DataFrame instead."""
    result = _json.loads(_sweep_json(str(file), dry_run, None if src is None else str(src), arch,
                                     list(devices or []), seed, no_cache))
    if frame:
        import pandas
        return pandas.DataFrame(result["rows"])
    return result


def tune(kernel, shapes, sweep=None, table=None, dtype=None, src=None, device=0, seed=1,
         no_cache=False, frame=False):
    """`kjit tune KERNEL --shapes ...`: the sweep file's variants at each shape, each winner
    recorded in the tuned table that start-up reads (the baseline kept when no variant beats it
    beyond the noise). shapes: "rows=1,n=4096" strings or dicts; sweep: the sweep file (default:
    the project file's sweep file of `kernel`); table: the tuned table (default: the project
    file's `tuned`). One dict per shape (shape, defines, median_us, baseline_us, note, failed,
    gpu, arch, dtype, sweep: the sweep as sweep.json holds it); frame=True gives them as a pandas
    DataFrame without the sweeps."""
    texts = [s if isinstance(s, str) else ",".join(f"{k}={v}" for k, v in dict(s).items())
             for s in shapes]
    rows = _tune(kernel, texts, "" if sweep is None else str(sweep),
                 "" if table is None else str(table), dtype or "",
                 None if src is None else str(src), device, seed, no_cache)
    if frame:
        import pandas
        return pandas.DataFrame([{k: v for k, v in r.items() if k != "sweep"} for r in rows])
    return rows


def sig(paths=(), src=None, defines=None, include_dirs=(), instantiations=(), libclang=""):
    """`kjit sig --json`: each kernel's entry point, parameters (names, types, sizes, offsets)
    and launch bounds, read with libclang from `paths` (else the kernel directory)."""
    return _json.loads(_sig_json([str(p) for p in paths], None if src is None else str(src),
                                 {k: str(v) for k, v in (defines or {}).items()},
                                 [str(d) for d in include_dirs], list(instantiations), libclang))
