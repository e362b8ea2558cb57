"""kjit's Python module on a GPU: launches on torch tensors and CuPy arrays, on the current
stream and a side stream, inside a torch CUDA graph capture, and the launch checks. Run by
`python/tests/run.py gpu` (ctest: python_gpu), which skips without a usable GPU."""
import os
import sys
import tempfile
import unittest

import kjit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None
try:
    import numpy
except ImportError:
    numpy = None


def block_sweep(directory, shape="", check="", warmup=1, reps=3):
    """A sweep of rms_norm's RMS_BLOCK over 128 and 256 (digest check), written into
    `directory`: its path. `shape` and `check` add lines to those tables."""
    path = os.path.join(directory, "s.sweep.toml")
    with open(path, "w") as f:
        f.write(f'kernel = "rms_norm"\n{shape}[sweep]\nRMS_BLOCK = [128, 256]\n[check]\n'
                f'mode = "digest"\n{check}[bench]\nwarmup = {warmup}\nreps = {reps}\n')
    return path


def engine():
    e = kjit.Engine(device=0, src=os.path.join(ROOT, "kernel_src"))
    rows = e.prepare([{"name": "rms_norm", "defines": {"RMS_BLOCK": "256"}}], shape={})
    assert rows[0]["error"] is None, rows[0]["error"]
    return e


@unittest.skipIf(torch is None, "torch is not installed")
class Torch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.engine = engine()
        cls.fn = cls.engine.function("rms_norm", "rms_norm_f32")

    def inputs(self, rows=64, n=1024):
        g = torch.Generator(device="cuda").manual_seed(1)
        x = torch.randn(rows, n, device="cuda", generator=g)
        w = torch.randn(n, device="cuda", generator=g)
        return x, w, torch.empty_like(x)

    def reference(self, x, w):
        x64, w64 = x.double(), w.double()
        return (x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + 1e-6) * w64).float()

    def test_launch_on_torch_tensors_matches_a_float64_reference(self):
        x, w, y = self.inputs()
        self.fn(x.shape[0], 256, x, w, y, x.shape[0], x.shape[1], 1e-6)
        torch.cuda.synchronize()
        err = ((y.double() - self.reference(x, w).double()).norm() /
               self.reference(x, w).double().norm()).item()
        self.assertLess(err, 1e-6)

    def test_a_side_stream_and_the_current_stream_give_the_same_bits(self):
        x, w, y = self.inputs()
        y2 = torch.empty_like(y)
        self.fn(x.shape[0], 256, x, w, y, x.shape[0], x.shape[1], 1e-6)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # kjit launches on torch's current stream: s
            self.fn(x.shape[0], 256, x, w, y2, x.shape[0], x.shape[1], 1e-6)
        s.synchronize()
        self.assertTrue(torch.equal(y, y2))
        y3 = torch.empty_like(y)
        self.fn(x.shape[0], 256, x, w, y3, x.shape[0], x.shape[1], 1e-6, stream=s)
        s.synchronize()
        self.assertTrue(torch.equal(y, y3))

    def test_a_launch_inside_a_torch_cuda_graph_capture(self):
        x, w, y = self.inputs()
        want = torch.empty_like(y)
        self.fn(x.shape[0], 256, x, w, want, x.shape[0], x.shape[1], 1e-6)
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            with torch.cuda.graph(g):
                self.fn(x.shape[0], 256, x, w, y, x.shape[0], x.shape[1], 1e-6)
        torch.cuda.current_stream().wait_stream(s)
        y.zero_()
        g.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y, want))

    def test_an_int_parameter_refuses_a_float(self):
        x, w, y = self.inputs()
        with self.assertRaises(kjit.LaunchError) as c:
            self.fn(x.shape[0], 256, x, w, y, float(x.shape[0]), x.shape[1], 1e-6)
        self.assertIn("parameter 4", str(c.exception))
        self.assertIn("float", str(c.exception))
        with self.assertRaises(kjit.LaunchError):
            self.fn(x.shape[0], 256, x, w, y, x.shape[0], x.shape[1])  # one argument short
        with self.assertRaises(kjit.LaunchError):
            self.fn(x.shape[0], 256, "x", w, y, x.shape[0], x.shape[1], 1e-6)
        with self.assertRaises(kjit.ConfigError):  # no block
            self.fn(x.shape[0])
        with self.assertRaises(kjit.ConfigError) as c:
            self.fn(x.shape[0], 256, x, w, y, x.shape[0], x.shape[1], 1e-6, steam=0)
        self.assertIn("steam", str(c.exception))
        for bad in ({"smem": -1}, {"smem": "x"}, {"stream": -1}, {"stream": "s"}):
            with self.assertRaises(kjit.ConfigError, msg=bad):
                self.fn(x.shape[0], 256, x, w, y, x.shape[0], x.shape[1], 1e-6, **bad)

    @unittest.skipIf(numpy is None, "numpy is not installed")
    def test_dlpack_numpy_scalars_and_a_grid_tuple_give_the_same_bits(self):
        x, w, y = self.inputs()
        self.fn(x.shape[0], 256, x, w, y, x.shape[0], x.shape[1], 1e-6)

        class OnlyDLPack:  # an array that speaks DLPack alone
            def __init__(self, t):
                self.t = t

            def __dlpack__(self, **kw):
                return self.t.__dlpack__(**kw)

            def __dlpack_device__(self):
                return self.t.__dlpack_device__()
        y2 = torch.empty_like(y)
        rows, eps = numpy.int32(x.shape[0]), numpy.float32(1e-6)
        self.fn((numpy.int64(x.shape[0]), 1, 1), (256,), OnlyDLPack(x), OnlyDLPack(w),
                OnlyDLPack(y2), rows, x.shape[1], eps)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y, y2))
        with self.assertRaises(kjit.LaunchError) as c:  # a CPU tensor through DLPack
            self.fn(1, 256, OnlyDLPack(x.cpu()), w, y2, 1, x.shape[1], 1e-6)
        self.assertIn("host memory", str(c.exception))
        with self.assertRaises(kjit.ConfigError):
            self.fn((1, 2, 3, 4), 256, x, w, y2, 1, x.shape[1], 1e-6)

    def test_a_plan_launches_a_prepared_define_set_with_the_contracts_geometry(self):
        # Two rows per warp at 64 threads (the prepare row's define_values into kjit.plan):
        # grid, block and arguments by name from the plan, the same bits as the block form.
        x, w, want = self.inputs(rows=333, n=1000)
        self.fn(x.shape[0], 256, x, w, want, x.shape[0], x.shape[1], 1e-6)
        row = self.engine.prepare([{"name": "rms_norm_rows", "source": "rms_norm",
                                    "defines": {"RMS_BLOCK": "64", "RMS_WARP_ROWS": "2"}}],
                                  shape={})[0]
        self.assertIsNone(row["error"])
        p = kjit.plan("rms_norm", {"rows": 333, "n": 1000}, "f32", row["define_values"])
        (step,) = p["steps"]
        self.assertEqual((step["grid"], step["block"]), ((84, 1, 1), (64, 1, 1)))
        y = torch.full_like(x, float("nan"))
        values = dict(p["scalars"], x=x, w=w, y=y)
        self.engine.function("rms_norm_rows", step["entry"])(
            step["grid"], step["block"], *[values[name] for name in step["params"]])
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y, want))

    def test_a_function_describes_its_entry_point(self):
        want = kjit.compile("rms_norm", {"RMS_BLOCK": "256"}, arch=self.engine.arch,
                            src=os.path.join(ROOT, "kernel_src"))["entries"]["rms_norm_f32"]
        self.assertEqual(self.fn.param_types, want)
        self.assertEqual(self.fn.max_threads_per_block, 256)  # __launch_bounds__(RMS_BLOCK)
        self.assertGreater(self.fn.registers, 0)
        self.assertEqual(self.fn.name, "rms_norm_f32")  # the entry point
        self.assertEqual(self.fn.variant, "rms_norm")   # the prepared kernel it came from
        self.assertTrue(self.engine.has_device)
        self.assertRegex(self.engine.arch, r"^sm_\d+$")

    def test_tune_gives_a_frame_without_the_sweeps(self):
        try:
            import pandas
        except ImportError:
            self.skipTest("pandas is not installed")
        with tempfile.TemporaryDirectory() as d:
            frame = kjit.tune("rms_norm", ["rows=1,n=1024"], sweep=block_sweep(d),
                              table=os.path.join(d, "t.toml"),
                              src=os.path.join(ROOT, "kernel_src"), frame=True)
        self.assertIsInstance(frame, pandas.DataFrame)
        self.assertEqual(len(frame), 1)
        self.assertNotIn("sweep", frame.columns)
        self.assertIn(frame["defines"][0]["RMS_BLOCK"], ("128", "256"))

    def test_the_benchmark_floor_launches_the_same_kernel(self):
        x, w, y = self.inputs()
        y2 = torch.zeros_like(y)
        self.fn(x.shape[0], 256, x, w, y, x.shape[0], x.shape[1], 1e-6)
        self.fn._raw_launches(x.shape[0], 256, x, w, y2, x.shape[0], x.shape[1], 1e-6, count=3)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y, y2))

    def test_tune_records_what_it_returns(self):
        try:
            import tomllib
        except ImportError:
            self.skipTest("tomllib needs Python 3.11")
        with tempfile.TemporaryDirectory() as d:
            sweep = block_sweep(d, shape="[shape]\nrows = 1\nn = 4096\n",
                                check="baseline = { RMS_BLOCK = 256 }\n", warmup=2, reps=10)
            table = os.path.join(d, "tuned.toml")
            got = kjit.tune("rms_norm", ["rows=1,n=4096", {"rows": 64, "n": 1024}], sweep=sweep,
                            table=table, src=os.path.join(ROOT, "kernel_src"))
            with open(table, "rb") as f:
                entries = tomllib.load(f)["entry"]
        self.assertEqual(len(got), 2)
        self.assertEqual([r["shape"] for r in got], [{"rows": 1, "n": 4096}, {"rows": 64, "n": 1024}])
        for r in got:
            e = next(e for e in entries if e["shape"] == r["shape"])
            self.assertEqual(e["defines"], r["defines"])
            self.assertAlmostEqual(e["median_us"], r["median_us"], places=2)
            self.assertEqual(r["failed"], 0)
            self.assertEqual(len(r["sweep"]["rows"]), 2)
            self.assertTrue(all(row["check"] in ("IDENTICAL", "-") for row in r["sweep"]["rows"]),
                            r["sweep"]["rows"])

    def test_a_block_over_the_launch_bounds_is_refused(self):
        x, w, y = self.inputs()
        with self.assertRaises(kjit.LaunchError) as c:
            self.fn(x.shape[0], 512, x, w, y, x.shape[0], x.shape[1], 1e-6)
        self.assertIn("512", str(c.exception))


@unittest.skipIf(cupy is None, "CuPy is not installed")
class CuPy(unittest.TestCase):
    def test_launch_on_cupy_arrays_matches_torch_free_reference(self):
        e = engine()
        fn = e.function("rms_norm", "rms_norm_f32")
        rng = cupy.random.default_rng(2)
        x = rng.standard_normal((32, 4096), dtype=cupy.float32)
        w = rng.standard_normal(4096, dtype=cupy.float32)
        y = cupy.empty_like(x)
        s = cupy.cuda.Stream(non_blocking=True)
        s.wait_event(cupy.cuda.get_current_stream().record())  # x and w are written there
        fn(32, 256, x, w, y, 32, 4096, 1e-6, stream=s)
        s.synchronize()
        x64, w64 = x.astype(cupy.float64), w.astype(cupy.float64)
        ref = x64 / cupy.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-6) * w64
        err = float(cupy.linalg.norm(y - ref) / cupy.linalg.norm(ref))
        self.assertLess(err, 1e-6)


    @unittest.skipIf(torch is None, "the rule under test is CuPy's stream with torch imported")
    def test_a_launch_with_no_stream_goes_to_cupys_current_stream(self):
        self.assertIn("torch", sys.modules)  # and CuPy arrays follow CuPy's stream
        # The launch is captured
        # into s's graph only if it went to s; the output appears only when the graph runs.
        e = engine()
        fn = e.function("rms_norm", "rms_norm_f32")
        x = cupy.ones((4, 1024), dtype=cupy.float32)
        w = cupy.full(1024, 2.0, dtype=cupy.float32)
        y = cupy.zeros_like(x)
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            s.begin_capture()
            fn(4, 256, x, w, y, 4, 1024, 0.0)
            g = s.end_capture()
        s.synchronize()
        self.assertEqual(float(abs(y).max()), 0.0)
        g.launch(stream=s)
        s.synchronize()
        self.assertTrue(bool((y == 2.0).all()))


if __name__ == "__main__":
    unittest.main()
