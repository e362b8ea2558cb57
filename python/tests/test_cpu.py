"""kjit's Python module without a GPU: each function against the C++ path (the kjit binary of
the same build: $KJIT_BUILD_DIR/tools/kjit) where one exists. Run by `python/tests/run.py cpu` (ctest:
python_cpu) with PYTHONPATH at the build's python/ folder."""
import json
import os
import re
import subprocess
import tempfile
import unittest

import kjit

try:
    import numpy
except ImportError:
    numpy = None

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KJIT = os.path.join(os.environ.get("KJIT_BUILD_DIR", os.path.join(ROOT, "build")), "tools", "kjit")


def cli(*args, cwd=ROOT):
    """The kjit binary's stdout and stderr, and its exit code."""
    p = subprocess.run([KJIT, *args], cwd=cwd, capture_output=True, text=True)
    return p.stdout, p.stderr, p.returncode


class Packaging(unittest.TestCase):
    def test_an_extension_built_for_another_python_is_named_on_import(self):
        # The package as built, its extension renamed to another interpreter's ABI tag.
        import shutil
        import sys
        src = os.path.dirname(kjit.__file__)
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(src, os.path.join(tmp, "kjit"))
            for name in os.listdir(os.path.join(tmp, "kjit")):
                if name.startswith("_kjit") and name.endswith(".so"):
                    os.rename(os.path.join(tmp, "kjit", name),
                              os.path.join(tmp, "kjit", "_kjit.cpython-20-x86_64-linux-gnu.so"))
            p = subprocess.run([sys.executable, "-c", "import kjit"], cwd=tmp,
                               env={**os.environ, "PYTHONPATH": tmp}, capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("ImportError: kjit's extension here is _kjit.cpython-20-x86_64-linux-gnu.so, "
                      "built for another Python; this is Python", p.stderr)


class Errors(unittest.TestCase):
    def test_hierarchy_mirrors_the_cpp_one(self):
        for e in (kjit.ConfigError, kjit.NotFoundError, kjit.CompileError, kjit.NvrtcError,
                  kjit.LaunchError, kjit.CudaError, kjit.NoDeviceError):
            self.assertTrue(issubclass(e, kjit.Error), e)
        self.assertTrue(issubclass(kjit.FlagError, kjit.ConfigError))
        self.assertTrue(issubclass(kjit.Error, Exception))

    def test_a_cpp_error_arrives_as_its_own_class(self):
        os.environ["KJIT_NO_SUCH_FLAG"] = "1"
        try:
            with self.assertRaises(kjit.FlagError) as c:
                kjit.Engine(device=None)
            self.assertIs(type(c.exception), kjit.FlagError)
            self.assertIn("KJIT_NO_SUCH_FLAG is not a declared flag", str(c.exception))
        finally:
            del os.environ["KJIT_NO_SUCH_FLAG"]


class Compile(unittest.TestCase):
    def test_compile_matches_the_kjit_binary(self):
        with tempfile.TemporaryDirectory() as d:
            got = kjit.compile("rms_norm", {"RMS_BLOCK": "128"}, arch="sm_90", src="kernel_src")
            cubin = os.path.join(d, "k.cubin")
            out, err, rc = cli("compile", "rms_norm", "--src", "kernel_src", "-D", "RMS_BLOCK=128",
                               "--arch", "sm_90", "-o", cubin)
            self.assertEqual(rc, 0, err)
            key = re.search(r"key: ([0-9a-f]+)", out).group(1)
            self.assertEqual(got["key"], key)
            with open(cubin, "rb") as f:
                self.assertEqual(got["cubin"], f.read())
        self.assertTrue(got["cubin"].startswith(b"\x7fELF"))
        self.assertEqual(got["defines"], {"RMS_BLOCK": "128"})
        self.assertIn(got["origin"], ("disk", "compiled"))
        params = got["entries"]["rms_norm_f32"]
        # NVRTC's PTX marks no pointer (.ptr): a pointer is a 64-bit integer parameter.
        self.assertEqual([p["kind"] for p in params],
                         ["integer", "integer", "integer", "integer", "integer", "floating"])
        self.assertEqual([p["ptx"] for p in params], ["u64", "u64", "u64", "u32", "u32", "f32"])
        self.assertEqual([p["size"] for p in params], [8, 8, 8, 4, 4, 4])
        # The same request again is a cache hit with the same key.
        again = kjit.compile("rms_norm", {"RMS_BLOCK": "128"}, src="kernel_src")
        self.assertEqual(again["origin"], "disk")
        self.assertEqual(again["key"], got["key"])

    def test_a_define_the_kernel_never_reads_is_refused(self):
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.compile("rms_norm", {"RMS_BLOKC": "128"}, src="kernel_src")
        self.assertIn("define RMS_BLOKC (kjit.compile's defines) is never read by", str(c.exception))
        self.assertIn("did you mean RMS_BLOCK?", str(c.exception))

    def test_a_compile_error_names_the_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "broken.cu"), "w") as f:
                f.write('extern "C" __global__ void broken(float* x) {\n  x[0] = undeclared;\n}\n')
            with self.assertRaises(kjit.CompileError) as c:
                kjit.compile("broken", src=d, cache=False)
            self.assertRegex(str(c.exception), r"broken\.cu:2:\d+: error: .*undeclared")

    def test_an_unknown_kernel_is_refused(self):
        with self.assertRaises(kjit.NotFoundError) as c:
            kjit.compile("no_such_kernel", src="kernel_src")
        self.assertIn("unknown kernel 'no_such_kernel' (known kernels: conv1d", str(c.exception))

    def test_an_unknown_arch_is_a_config_error(self):
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.compile("rms_norm", arch="sm_999", src="kernel_src")
        self.assertIn("sm_999", str(c.exception))

    def test_nvrtc(self):
        self.assertGreaterEqual(kjit.nvrtc_version(), 12000)
        self.assertIn("sm_90", kjit.supported_archs())


class EngineWithoutDevice(unittest.TestCase):
    def setUp(self):
        self.engine = kjit.Engine(device=None, arch="sm_90", src="kernel_src")

    def test_prepare_a_shape_file_as_kjit_specialize_does(self):
        rows = self.engine.prepare("kernel_src/model.toml")
        out, err, rc = cli("specialize", "kernel_src/model.toml", "--src", "kernel_src",
                           "--arch", "sm_90")
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(rows)
        for r in rows:
            self.assertIsNone(r["error"], r)
            # kjit specialize prints "  NAME  ORIGIN  ms  ms  ms  DEFINES" per kernel.
            line = next(l for l in out.splitlines() if l.split()[:1] == [r["name"]])
            self.assertTrue(r["defines"])
            self.assertTrue(line.rstrip().endswith(r["defines"]), (line, r["defines"]))
            self.assertIn(r["origin"], ("hit", "miss", "remote"))
            self.assertTrue(r["entries"])
        names = {r["name"] for r in rows}
        self.assertLessEqual({"rms_norm", "rms_norm_prefill", "conv1d_update"}, names)
        # The engine's sources and arch, as the verb prints and takes them.
        self.assertIn(f"sources: {self.engine.sources}", err)
        self.assertEqual(self.engine.sources, "--src kernel_src/")
        self.assertEqual(self.engine.arch, "sm_90")
        self.assertFalse(self.engine.has_device)

    def test_prepare_kernels_at_a_shape(self):
        rows = self.engine.prepare(
            [{"name": "norm", "source": "rms_norm", "defines": {"RMS_BLOCK": "${block}"}}],
            shape={"block": 512})
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["defines"], "RMS_BLOCK=512")
        self.assertIn("rms_norm_bf16", rows[0]["entries"])
        direct = kjit.compile("rms_norm", {"RMS_BLOCK": "512"}, src="kernel_src")
        self.assertEqual(rows[0]["key"], direct["key"])

    def test_a_bad_spec_fails_its_row_or_the_call(self):
        rows = self.engine.prepare([{"name": "norm", "source": "rms_norm",
                                     "defines": {"RMS_BLOK": "512"}}], shape={})
        self.assertIn("RMS_BLOK", rows[0]["error"])
        with self.assertRaises(kjit.ConfigError):
            self.engine.prepare([{"name": "norm", "sauce": "rms_norm"}], shape={})

    def test_a_broken_shape_file_is_refused_at_its_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.toml")
            with open(path, "w") as f:
                f.write('[shape]\nrows = 4\n\n[[kernel]]\nname = "x"\nsource = "no_such"\n')
            with self.assertRaises(kjit.ConfigError) as c:
                self.engine.prepare(path)
            self.assertRegex(str(c.exception), r"model\.toml:\d+:\d+: error: .*no_such")

    def test_arguments_are_checked_by_the_parameter_types(self):
        self.engine.prepare([{"name": "rms_norm"}], shape={})
        self.engine.check("rms_norm", "rms_norm_f32", None, None, None, 64, 1024, 1e-6)
        with self.assertRaises(kjit.LaunchError) as c:  # rows (an int) given as a float
            self.engine.check("rms_norm", "rms_norm_f32", None, None, None, 64.0, 1024, 1e-6)
        self.assertIn("argument 4 is an 8-byte float but the kernel's parameter 4", str(c.exception))
        with self.assertRaises(kjit.LaunchError) as c:  # eps (a float) given as an int
            self.engine.check("rms_norm", "rms_norm_f32", None, None, None, 64, 1024, 0)
        self.assertIn("parameter 6", str(c.exception))
        with self.assertRaises(kjit.LaunchError) as c:
            self.engine.check("rms_norm", "rms_norm_f32", None, None, None, 64, 1024)
        self.assertIn("takes 6 parameters but 5 arguments", str(c.exception))
        with self.assertRaises(kjit.LaunchError) as c:
            self.engine.check("rms_norm", "rms_norm_f32", "x", None, None, 64, 1024, 1e-6)
        self.assertIn("argument 1 (str) is no device array: a kernel takes device arrays", str(c.exception))
        with self.assertRaises(kjit.LaunchError) as c:
            self.engine.check("rms_norm", "rms_norm_f32", None, None, None, 1 << 40, 1024, 1e-6)
        self.assertIn("does not fit", str(c.exception))

        class Array:  # anything with __cuda_array_interface__ is a pointer
            __cuda_array_interface__ = {"data": (1 << 20, False), "shape": (4,),
                                        "typestr": "<f4", "version": 3}
        self.engine.check("rms_norm", "rms_norm_f32", Array(), Array(), Array(), 1, 4, 1e-6)

        class HostTensor:  # a torch tensor in host memory: its data_ptr() is no device address
            is_cuda = False

            def data_ptr(self):
                return 1 << 20
        with self.assertRaises(kjit.LaunchError) as c:
            self.engine.check("rms_norm", "rms_norm_f32", HostTensor(), None, None, 1, 4, 1e-6)
        self.assertIn("argument 1 (HostTensor) is in host memory", str(c.exception))
        with self.assertRaises(kjit.NotFoundError):
            self.engine.check("rms_norm", "no_entry", None)

    @unittest.skipIf(numpy is None, "numpy is not installed")
    def test_numpy_scalars_are_typed_like_ints_and_floats_and_its_arrays_refused(self):
        self.engine.prepare([{"name": "rms_norm"}], shape={})
        check = lambda *a: self.engine.check("rms_norm", "rms_norm_f32", *a)
        check(None, None, None, numpy.int32(64), numpy.int64(1024), numpy.float32(1e-6))
        check(None, None, None, numpy.uint16(64), numpy.bool_(True), numpy.float64(1e-6))
        with self.assertRaises(kjit.LaunchError) as c:  # numpy.bool_ is the int 1: no float
            check(None, None, None, 1, 2, numpy.bool_(True))
        self.assertIn("parameter 6", str(c.exception))
        with self.assertRaises(kjit.LaunchError) as c:  # rows (an int) as a numpy float
            check(None, None, None, numpy.float32(64), 1024, 1e-6)
        self.assertIn("argument 4 is an 8-byte float but the kernel's parameter 4", str(c.exception))
        with self.assertRaises(kjit.LaunchError) as c:  # eps (a float) as a numpy int
            check(None, None, None, 64, 1024, numpy.int32(0))
        self.assertIn("parameter 6", str(c.exception))
        with self.assertRaises(kjit.LaunchError) as c:  # rows is an int: 2^40 does not fit
            check(None, None, None, numpy.int64(1 << 40), 1024, 1e-6)
        self.assertIn("does not fit", str(c.exception))
        with self.assertRaises(kjit.LaunchError) as c:  # a host array (DLPack on the CPU)
            check(numpy.zeros(4, numpy.float32), None, None, 1, 4, 1e-6)
        self.assertIn("argument 1 (ndarray) is in host memory", str(c.exception))

    def test_launching_needs_a_device(self):
        self.engine.prepare([{"name": "rms_norm"}], shape={})
        with self.assertRaises(kjit.NoDeviceError) as c:
            self.engine.function("rms_norm", "rms_norm_f32")
        self.assertIn("device=None", str(c.exception))


@unittest.skipIf(kjit.device_available()[0], "a GPU is there")
class NoGpu(unittest.TestCase):
    def test_an_engine_on_a_device_says_why_there_is_none(self):
        with self.assertRaises(kjit.NoDeviceError):
            kjit.Engine(device=0)
        self.assertFalse(kjit.Engine().has_device)  # "auto" falls back to compiling only


class Lint(unittest.TestCase):
    def test_lint_matches_kjit_lint(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "k.cu"), "w") as f:
                f.write("#define TWICE(x) \\\n  ((x) +\n  (x))\n"
                        'extern "C" __global__ void k(float* y) { y[0] = TWICE(1.0f); }\n')
            got = kjit.lint([d])
            out, _, rc = cli("lint", d, "--json")
            want = json.loads(out)
        self.assertEqual(rc, 1)
        self.assertTrue(got["findings"])
        self.assertEqual([(f["path"], f["line"], f["rule"]) for f in got["findings"]],
                         [(f["path"], f["line"], f["rule"]) for f in want])
        self.assertEqual(got["files"], 1)

    def test_lint_of_the_project_kernels_is_clean(self):
        got = kjit.lint(src="kernel_src")
        self.assertEqual(got["findings"], [], got)
        self.assertEqual(got["notes"], [])  # the clang rules ran too
        self.assertGreaterEqual(got["files"], 3)

    def test_lint_of_a_missing_path_is_a_config_error(self):
        with self.assertRaises(kjit.ConfigError):
            kjit.lint(["/no/such/dir"])


class Sig(unittest.TestCase):
    def test_sig_matches_kjit_sig(self):
        got = kjit.sig(["kernel_src/rms_norm.cu"])
        out, err, rc = cli("sig", "kernel_src/rms_norm.cu", "--json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(got, json.loads(out))
        f32 = next(k for k in got if k["name"] == "rms_norm_f32")
        self.assertEqual([p["name"] for p in f32["params"]], ["x", "w", "y", "rows", "n", "eps"])
        self.assertEqual(f32["bytes"], 36)

    def test_a_define_reaches_the_launch_bounds(self):
        got = kjit.sig(["kernel_src/rms_norm.cu"], defines={"RMS_BLOCK": 512})
        self.assertEqual(got[0]["launch_bounds"][0]["value"], 512)


class Sweep(unittest.TestCase):
    def test_a_dry_run_plans_and_compiles_what_kjit_sweep_does(self):
        got = kjit.sweep("kernel_src/rms_norm.sweep.toml", dry_run=True, src="kernel_src")
        out, err, rc = cli("sweep", "--dry-run", "kernel_src/rms_norm.sweep.toml", "--src",
                           "kernel_src")
        self.assertEqual(rc, 0, out + err)
        count = int(re.search(r"sweep plan: (\d+) variants", out + err).group(1))
        self.assertEqual(len(got["rows"]), count)
        self.assertEqual(got["kernel"], "rms_norm")
        for r in got["rows"]:
            self.assertEqual(r["error"], "", r)
            self.assertIn(r["variant"], out + err)
        self.assertEqual(sum(r["baseline"] for r in got["rows"]), 1)

    def test_a_frame_holds_the_rows(self):
        try:
            import pandas
        except ImportError:
            self.skipTest("pandas is not installed")
        rows = kjit.sweep("kernel_src/rms_norm.sweep.toml", dry_run=True, src="kernel_src")["rows"]
        frame = kjit.sweep("kernel_src/rms_norm.sweep.toml", dry_run=True, src="kernel_src",
                           frame=True)
        self.assertIsInstance(frame, pandas.DataFrame)
        self.assertEqual(list(frame["variant"]), [r["variant"] for r in rows])

    def test_a_user_project_sweeps_its_own_contract(self):
        # examples/splitk_app: its kjit.toml names its kernels and contract files; twice, to
        # see that a second call does not register its contracts again.
        here = os.getcwd()
        os.chdir(os.path.join(ROOT, "examples", "splitk_app"))
        try:
            for _ in range(2):
                got = kjit.sweep("sweeps/splitk_gemv.sweep.toml", dry_run=True)
                self.assertEqual(got["kernel"], "splitk_gemv")
                self.assertTrue(got["rows"])
                self.assertTrue(all(r["error"] == "" for r in got["rows"]), got["rows"])
            out, err, rc = cli("sweep", "--dry-run", "sweeps/splitk_gemv.sweep.toml",
                               cwd=os.getcwd())
            self.assertEqual(rc, 0, out + err)
            count = int(re.search(r"sweep plan: (\d+) variants", out + err).group(1))
            self.assertEqual(len(got["rows"]), count)
            self.assertEqual(kjit.lint()["findings"], [])
        finally:
            os.chdir(here)

    def test_a_broken_sweep_file_is_refused_at_its_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.sweep.toml")
            with open(path, "w") as f:
                f.write('kernel = "rms_norm"\n[sweep]\nRMS_BLOCK = "many"\n')
            with self.assertRaises(kjit.ConfigError) as c:
                kjit.sweep(path, dry_run=True, src="kernel_src")
            self.assertRegex(str(c.exception), r"s\.sweep\.toml:\d+:\d+: error")


class Plan(unittest.TestCase):
    def test_every_launch_matches_the_sweep_dry_run(self):
        # kjit sweep plans each variant's launches through the same contract: its grid and
        # block columns for each of conv1d's sweep variants at the file's shape.
        import tomllib
        path = "kernel_src/conv1d.sweep.toml"
        with open(path, "rb") as f:
            spec = tomllib.load(f)
        rows = kjit.sweep(path, dry_run=True, src="kernel_src")["rows"]
        self.assertGreater(len(rows), 10)
        for r in rows:
            defines = dict(spec["defines"], **r["params"])
            step = kjit.plan("conv1d", spec["shape"], "f32", defines)["steps"][0]
            self.assertEqual(f"({','.join(map(str, step['grid']))})", r["grid"], r["variant"])
            self.assertEqual(f"({','.join(map(str, step['block']))})", r["block"], r["variant"])

    def test_a_plan_names_each_parameter_and_resolves_the_scalars(self):
        # The define set a prepare() row compiled (no GPU needed to prepare or to plan).
        row = kjit.Engine(device=None).prepare(
            [{"name": "rows2", "source": "rms_norm",
              "defines": {"RMS_BLOCK": 64, "RMS_WARP_ROWS": 2}}], shape={})[0]
        self.assertIsNone(row["error"])
        self.assertEqual(row["define_values"], {"RMS_BLOCK": "64", "RMS_WARP_ROWS": "2"})
        p = kjit.plan("rms_norm", {"rows": 333, "n": 1000}, "bf16", row["define_values"])
        self.assertEqual(p["defines"]["RMS_WARP_ROWS"], "2")
        (step,) = p["steps"]
        self.assertTrue(step["main"])  # the only launch, unmarked: the one reports describe
        self.assertEqual(step["entry"], "rms_norm_bf16")
        self.assertEqual(step["grid"], (84, 1, 1))  # 333 rows, 2 x 2 per block of 2 warps
        self.assertEqual(step["block"], (64, 1, 1))
        self.assertEqual(step["params"], ["x", "w", "y", "rows", "n", "eps"])
        self.assertEqual(p["scalars"]["rows"], 333)
        self.assertIsInstance(p["scalars"]["n"], int)
        self.assertAlmostEqual(p["scalars"]["eps"], 1e-6, places=12)
        self.assertEqual(p["buffers"]["x"], {"dtype": "bf16", "count": 333000, "role": "input"})
        self.assertEqual(p["launch"], {"ROWS_PER_LAUNCH": 333})
        capped = kjit.plan("rms_norm", {"rows": 333, "n": 1000}, launch={"ROWS_PER_LAUNCH": 7})
        self.assertEqual(capped["dtype"], "f32")  # the contract's first
        self.assertEqual(capped["steps"][0]["grid"], (7, 1, 1))
        # A misspelt define would plan the launch of the kernel's default.
        with self.assertRaisesRegex(kjit.ConfigError, "RMS_BLOK .* never read .* did you mean RMS_BLOCK"):
            kjit.plan("rms_norm", {"rows": 333, "n": 1000}, "f32", {"RMS_BLOK": "64"})
        # A define of a kernel tree's own copy, checked against that tree (as Engine(src=)).
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(ROOT, "kernel_src", "rms_norm.cu")) as f:
                text = f.read()
            with open(os.path.join(d, "rms_norm.cu"), "w") as f:
                f.write("#if RMS_NEWKNOB\n#endif\n" + text)
            knob = {"RMS_NEWKNOB": "1"}
            self.assertEqual(kjit.plan("rms_norm", {"rows": 8, "n": 1024}, "f32", knob, src=d)
                             ["defines"]["RMS_NEWKNOB"], "1")
            with self.assertRaisesRegex(kjit.ConfigError, "RMS_NEWKNOB .* never read"):
                kjit.plan("rms_norm", {"rows": 8, "n": 1024}, "f32", knob)

    def test_a_user_project_plans_its_own_two_step_contract(self):
        here = os.getcwd()
        os.chdir(os.path.join(ROOT, "examples", "splitk_app"))
        try:
            p = kjit.plan("splitk_gemv", {"rows": 64, "cols": 4096})
        finally:
            os.chdir(here)
        self.assertEqual([s["entry"] for s in p["steps"]], ["splitk_partial", "splitk_reduce"])
        self.assertEqual([s["main"] for s in p["steps"]], [True, False])
        self.assertEqual(p["buffers"]["partial"]["role"], "workspace")

    def test_copies_shared_memory_three_dimensions_and_every_scalar_type(self):
        # A project's own contract: a copy, then two launches (the last one, unmarked, is main).
        contract = """name = "steps3"
shape = ["n", "m"]
dtypes = ["f32"]
[defines]
BLK = 128
SM = 64
[[args]]
name = "a"
type = "f32*"
count = "n"
[[args]]
name = "b"
type = "f32*"
count = "n"
output = true
[[args]]
name = "count"
type = "u32"
value = "n"
[[args]]
name = "big"
type = "u64"
value = "m"
[[args]]
name = "neg"
type = "i64"
value = "-m"
[[args]]
name = "ratio"
type = "f64"
value = "0.25"
[[step]]
from = "a"
to = "b"
[[step]]
entry = "first"
grid = ["ceil_div(n, BLK)", 2, 3]
block = ["BLK", 2]
smem = "SM * 4"
args = ["a", "b", "count", "big", "neg", "ratio"]
[[step]]
entry = "second"
grid = "1"
block = "32"
args = ["b"]
"""
        here = os.getcwd()
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "kernels"))
            with open(os.path.join(d, "kernels", "steps3.cu"), "w") as f:
                f.write('#if BLK > 0 && SM > 0\n#endif\nextern "C" __global__ void second(float* b) {}\n')
            with open(os.path.join(d, "steps3.toml"), "w") as f:
                f.write(contract)
            with open(os.path.join(d, "kjit.toml"), "w") as f:
                f.write('kernels = "kernels"\ncontracts = ["steps3.toml"]\n')
            os.chdir(d)
            try:
                p = kjit.plan("steps3", {"n": 1000, "m": 2**40}, defines={"SM": 100})
            finally:
                os.chdir(here)
        copy, first, second = p["steps"]
        self.assertEqual(copy, {"kind": "copy", "from": "a", "to": "b"})
        self.assertEqual((first["grid"], first["block"], first["smem"]), ((8, 2, 3), (128, 2, 1), 400))
        self.assertEqual(first["params"], ["a", "b", "count", "big", "neg", "ratio"])
        self.assertEqual((first["main"], second["main"]), (False, True))
        self.assertEqual(p["scalars"], {"count": 1000, "big": 2**40, "neg": -2**40, "ratio": 0.25})
        self.assertIsInstance(p["scalars"]["big"], int)
        self.assertIsInstance(p["scalars"]["ratio"], float)

    def test_a_case_the_kernel_cannot_run_is_refused_by_name(self):
        with self.assertRaises(kjit.ConfigError) as c:  # the contract's precondition
            kjit.plan("delta_rule", {"b": 1, "h": 2, "dk": 130, "dv": 128})
        self.assertIn("dk=130 must be a multiple of DR_KSPLIT=4 and at most DR_MAX_DK=128",
                      str(c.exception))
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.plan("rms_norm", {"row": 2, "n": 8})
        self.assertIn("no shape key 'row' (its keys: rows, n)", str(c.exception))
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.plan("rms_norm", {"n": 8})
        self.assertIn("the shape has no 'rows'", str(c.exception))
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.plan("delta_rule", {"b": 1, "h": 2, "dk": 128, "dv": 128}, "bf16")
        self.assertIn("no dtype bf16", str(c.exception))
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.plan("rms_norm", {"rows": 2, "n": 8}, launch={"GRID": 1})
        self.assertIn("no launch parameter 'GRID'", str(c.exception))
        with self.assertRaises(kjit.NotFoundError) as c:
            kjit.plan("no_such_contract", {})
        self.assertIn("no contract 'no_such_contract' (known: rms_norm, conv1d", str(c.exception))

    def test_a_value_that_is_no_integer_or_a_define_string_is_refused(self):
        for shape in ({"rows": 2.5, "n": 8}, {"rows": "12", "n": 8}, {"rows": None, "n": 8}):
            with self.assertRaises(kjit.ConfigError) as c:
                kjit.plan("rms_norm", shape)
            self.assertIn("is not an integer", str(c.exception))
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.plan("rms_norm", {"rows": 2**64, "n": 8})
        self.assertIn("does not fit 64 bits", str(c.exception))
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.plan("rms_norm", {"rows": 2, "n": 8}, launch={"ROWS_PER_LAUNCH": 2.9})
        self.assertIn("ROWS_PER_LAUNCH=2.9 is not an integer", str(c.exception))
        with self.assertRaises(kjit.ConfigError) as c:
            kjit.plan("rms_norm", {"rows": 2, "n": 8}, defines="RMS_BLOCK=64")
        self.assertIn("defines must be a dict", str(c.exception))
        with self.assertRaises(kjit.ConfigError):
            kjit.plan("rms_norm", "rows=2,n=8")
        if numpy is not None:  # NumPy integers are integers
            rows = kjit.plan("rms_norm", {"rows": numpy.int64(3), "n": 8})["shape"]["rows"]
            self.assertEqual(rows, 3)


class Tune(unittest.TestCase):
    SWEEP = os.path.join(ROOT, "bench", "tune", "rms_norm_decode.sweep.toml")

    def same_error_as_kjit_tune(self, error, *args, shapes="rows=1,n=4096", table=None):
        """Runs kjit.tune and `kjit tune` alike; both fail with the same message and no table
        is written."""
        with tempfile.TemporaryDirectory() as d:
            path = table or os.path.join(d, "t.toml")
            with self.assertRaises(error) as c:
                kjit.tune(args[0], [shapes], **dict(args[1], table=path))
            cmd = ["tune", args[0], "--shapes", shapes, "--table", path]
            for k, v in args[1].items():
                cmd += [f"--{k}", str(v)]
            _, err, rc = cli(*cmd)
            self.assertNotEqual(rc, 0)
            self.assertIn(str(c.exception).splitlines()[0], err)
            self.assertFalse(os.path.exists(os.path.join(d, "t.toml")))
        return str(c.exception)

    def test_a_shape_the_contract_lacks_is_refused_before_anything_runs(self):
        msg = self.same_error_as_kjit_tune(kjit.ConfigError, "rms_norm", {"sweep": self.SWEEP},
                                           shapes="rows=1,width=4096")
        self.assertIn("width", msg)

    def test_a_sweep_of_another_kernel_is_refused(self):
        msg = self.same_error_as_kjit_tune(kjit.ConfigError, "conv1d", {"sweep": self.SWEEP})
        self.assertIn("sweeps rms_norm, not conv1d", msg)

    def test_a_dtype_the_contract_lacks_is_refused(self):
        msg = self.same_error_as_kjit_tune(
            kjit.ConfigError, "delta_rule",
            {"sweep": os.path.join(ROOT, "kernel_src", "delta_rule.sweep.toml"), "dtype": "bf16"},
            shapes="b=1,h=16,dk=64,dv=64")
        self.assertIn("delta_rule has no dtype bf16", msg)

    @unittest.skipIf(kjit.device_available()[0], "a GPU is there")
    def test_without_a_gpu_it_fails_as_kjit_tune_does_and_records_nothing(self):
        msg = self.same_error_as_kjit_tune(kjit.Error, "rms_norm",
                                           {"sweep": self.SWEEP, "src": "kernel_src"})
        with tempfile.TemporaryDirectory() as d:  # shapes as dicts are the same shapes
            with self.assertRaises(kjit.Error) as c:
                kjit.tune("rms_norm", [{"rows": 1, "n": 4096}], sweep=self.SWEEP,
                          table=os.path.join(d, "t.toml"), src="kernel_src")
            self.assertEqual(str(c.exception), msg)
            self.assertEqual(os.listdir(d), [])
        with self.assertRaises(kjit.ConfigError) as c:  # a dict's key the contract lacks
            kjit.tune("rms_norm", [{"rows": 1, "width": 4096}], sweep=self.SWEEP, table="t.toml")
        self.assertIn("width", str(c.exception))

    def test_the_table_and_the_sweep_default_to_the_project_files(self):
        here, src = os.getcwd(), os.path.join(ROOT, "kernel_src")
        with tempfile.TemporaryDirectory() as d:
            project = os.path.join(d, "kjit.toml")
            with open(project, "w") as f:
                f.write(f'kernels = "{src}"\nsweep_files = ["{src}/rms_norm.sweep.toml"]\n')
            os.chdir(d)
            try:
                # A project file that names no `tuned`: the table is asked for. No sweep file
                # given: the project's sweep file of rms_norm is found (the lookup comes first
                # and fails otherwise, as below), the table still missing.
                for sweep in (self.SWEEP, None):
                    with self.assertRaises(kjit.ConfigError) as c:
                        kjit.tune("rms_norm", ["rows=1,n=4096"], sweep=sweep, table=None)
                    self.assertIn("needs a tuned table", str(c.exception))
                self.assertFalse(os.path.exists("None"))
                if not kjit.device_available()[0]:
                    # With `tuned` the tune takes that table, and without a GPU stops before
                    # writing it.
                    with open(project, "a") as f:
                        f.write('tuned = "t.toml"\n')
                    with self.assertRaises(kjit.NoDeviceError):
                        kjit.tune("rms_norm", ["rows=1,n=4096"], sweep=self.SWEEP)
                    self.assertFalse(os.path.exists("t.toml"))
            finally:
                os.chdir(here)
        with self.assertRaises(kjit.ConfigError) as c:  # no sweep file of this kernel anywhere
            kjit.tune("no_such_kernel", ["n=1"], table="t.toml")
        self.assertIn("needs a sweep file of no_such_kernel", str(c.exception))


if __name__ == "__main__":
    unittest.main()
