"""kjit's conv1d against causal-conv1d over a grid of shapes (bench/grids/conv1d.toml), both in
this process with one timer: CUDA events around each call (a one-call CUDA graph replay per arm
unless --stream), the L2 flushed before each (a 256 MiB
write outside the timed region), warm-ups first, and A B B A blocks of repetitions per case.
kjit's arm is the CUBIN `kjit compile` writes, launched through CuPy on torch's stream with the
contract's grid; the peer is causal_conv1d_fn on the same tensors. Each case also compares the
two outputs (max abs difference over max abs value) so that both compute the same thing.

Prints one line per case and a summary; --csv writes the rows. Usage (GPU machine):
  python3 bench/peers_grid.py bench/grids/conv1d.toml --kjit build/tools/kjit --src kernel_src
"""
import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib

import cupy as cp
import numpy as np
import torch

from peers_kernels import graphed

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


class Timer:
    def __init__(self, flush_mib=256):
        self.scratch = torch.empty(flush_mib << 20, dtype=torch.uint8, device="cuda")

    def reps(self, fn, n):
        """n timings of fn in microseconds, the L2 flushed before each."""
        out = []
        for _ in range(n):
            self.scratch.zero_()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) * 1000.0)
        return out

    def abba(self, fa, fb, pairs, reps, warmup=3):
        """Per pair: A, B, B, A blocks of `reps`; returns (all A, all B, per-pair tB / tA)."""
        for _ in range(warmup):
            fa()
            fb()
        all_a, all_b, ratios = [], [], []
        for _ in range(pairs):
            a = self.reps(fa, reps)
            b = self.reps(fb, 2 * reps)
            a += self.reps(fa, reps)
            all_a += a
            all_b += b
            ratios.append(statistics.median(b) / statistics.median(a))
        return all_a, all_b, ratios


def copy_gbps(timer):
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    us = statistics.median(timer.reps(lambda: y.copy_(x), 20))
    return 2 * x.numel() / us / 1e3


class KjitConv1d:
    """conv1d compiled by kjit (one CUBIN per define set), launched with the contract's grid."""

    def __init__(self, kjit, src, defines, workdir):
        self.kjit, self.src, self.defines, self.workdir = kjit, src, dict(defines), workdir
        self.modules = {}

    def function(self, dtype, silu):
        d = dict(self.defines, CONV_SILU=str(int(silu)))
        key = tuple(sorted(d.items()))
        if key not in self.modules:
            path = os.path.join(self.workdir, f"conv1d_{len(self.modules)}.cubin")
            major, minor = torch.cuda.get_device_capability()
            cmd = [self.kjit, "compile", "conv1d", "-o", path, "--arch", f"sm_{major}{minor}"]
            if self.src:
                cmd += ["--src", self.src]
            for k, v in d.items():
                cmd += ["-D", f"{k}={v}"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            self.modules[key] = cp.RawModule(path=path)
        return self.modules[key].get_function(f"conv1d_{dtype}"), d

    def launcher(self, dtype, silu, x, w, bias, y):
        fn, d = self.function(dtype, silu)
        b, c, t = x.shape
        tile, block = int(d["CONV_TILE"]), int(d["CONV_BLOCK"])
        warps = b * c * (-(-t // (32 * tile)))
        grid = -(-(warps * 32) // block)
        ptr = lambda a: np.uint64(a.data_ptr() if a is not None else 0)
        args = (ptr(x), ptr(w), ptr(bias), np.uint64(0), ptr(y), np.uint64(0),
                np.int32(b), np.int32(c), np.int32(t))
        def run(): # on torch's current stream (the capture stream inside a graph capture)
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                fn((grid,), (block,), args)
        return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("grid")
    ap.add_argument("--kjit", default="build/tools/kjit")
    ap.add_argument("--src", default="kernel_src")
    ap.add_argument("-D", dest="defines", action="append", default=[],
                    help="NAME=VALUE for kjit's compile (default: the contract's defaults)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--csv")
    ap.add_argument("--dtype", action="append", help="only these dtypes")
    ap.add_argument("--table", help="a tuned table: each shape's entry (exact shape, dtype and "
                    "GPU) gives kjit's defines there, else the defaults")
    ap.add_argument("--stream", action="store_true",
                    help="time stream launches instead of one-call graph replays")
    a = ap.parse_args()
    with open(a.grid, "rb") as f:
        grid = tomllib.load(f)
    from causal_conv1d import causal_conv1d_fn

    defines = {"CONV_TILE": "8", "CONV_BLOCK": "256"} # the contract's defaults
    for kv in a.defines:
        k, v = kv.split("=", 1)
        defines[k] = v
    tuned = {}
    if a.table:
        with open(a.table, "rb") as f:
            gpu = torch.cuda.get_device_name()
            for e in tomllib.load(f).get("entry", []):
                if e["kernel"] == "conv1d" and e["gpu"] == gpu:
                    s = e["shape"]
                    d = {k: v for k, v in e["defines"].items() if k != "CONV_SILU"}
                    tuned[(e["dtype"], s["b"], s["c"], s["t"])] = d
    torch.manual_seed(0)
    timer = Timer()
    ceiling = copy_gbps(timer)
    print(f"device-to-device copy: {ceiling:.1f} GB/s; kjit defines {defines}; "
          f"{'stream launches' if a.stream else 'one-call graph replays'}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        kjits = {}

        def kjit_for(key):
            d = dict(defines, **tuned.get(key, {}))
            k = tuple(sorted(d.items()))
            if k not in kjits:
                kjits[k] = KjitConv1d(a.kjit, a.src, d, work + f"/{len(kjits)}")
                os.makedirs(work + f"/{len(kjits) - 1}")
            return kjits[k], d
        for dname in a.dtype or grid["dtypes"]:
            dtype = DTYPES[dname]
            for b in grid["b"]:
                for c in grid["c"]:
                    for t in grid["t"]:
                        x = torch.randn(b, c, t, device="cuda", dtype=dtype)
                        w = torch.randn(c, 4, device="cuda", dtype=dtype) * 0.5
                        bias_t = torch.randn(c, device="cuda", dtype=dtype)
                        y = torch.empty_like(x)
                        nbytes = 2 * x.numel() * x.element_size()
                        kjit, used = kjit_for((dname, b, c, t))
                        config = f"T{used['CONV_TILE']}xB{used['CONV_BLOCK']}"
                        for form in grid["forms"]:
                            silu = "silu" in form
                            bias = bias_t if "bias" in form else None
                            act = "silu" if silu else None
                            ours = kjit.launcher(dname, silu, x, w, bias, y)
                            peer = lambda: causal_conv1d_fn(x, w, bias, activation=act)
                            ours()
                            ref = peer()
                            torch.cuda.synchronize()
                            diff = ((y.float() - ref.float()).abs().max() /
                                    ref.float().abs().max().clamp_min(1e-30)).item()
                            # One call per graph: neither arm's host cost (Python, the peer's
                            # checks and allocation) shows in its device time.
                            fa, fb = ((ours, peer) if a.stream
                                      else (graphed(ours, calls=1), graphed(peer, calls=1)))
                            ta, tb, ratios = timer.abba(fa, fb, a.pairs, a.reps)
                            del fa, fb
                            ka, pb = statistics.median(ta), statistics.median(tb)
                            r = statistics.median(ratios)
                            row = dict(dtype=dname, b=b, c=c, t=t, form=form, config=config,
                                       kjit_us=ka,
                                       peer_us=pb, speedup=r, low=min(ratios), high=max(ratios),
                                       kjit_gbps=nbytes / ka / 1e3,
                                       copy_share=nbytes / ka / 1e3 / ceiling, diff=diff,
                                       mib=nbytes / 2**20)
                            rows.append(row)
                            print(f"{dname:4} b={b:<2} c={c:<4} t={t:<4} {form:9} {config:9} "
                                  f"kjit {ka:9.2f} us "
                                  f"causal-conv1d {pb:9.2f} us  peer/kjit {r:5.3f} "
                                  f"[{min(ratios):5.3f} .. {max(ratios):5.3f}]  "
                                  f"{row['kjit_gbps']:7.1f} GB/s ({100 * row['copy_share']:4.1f} % "
                                  f"of copy)  diff {diff:.1e}", flush=True)
                        del x, y
    if not rows:
        print("summary: no case ran")
        return 1
    passed = [r for r in rows if r["speedup"] >= 1.0 and r["low"] >= 0.97]
    geo = math.exp(sum(math.log(r["speedup"]) for r in rows) / len(rows))
    big = [r for r in rows if r["mib"] >= 256]
    print(f"summary: {len(rows)} cases, {len(passed)} pass (peer/kjit >= 1.0, low >= 0.97); "
          f"geomean peer/kjit {geo:.3f}; worst {min(r['speedup'] for r in rows):.3f}; "
          f"cases >= 256 MiB at >= 90 % of copy: "
          f"{sum(r['copy_share'] >= 0.9 for r in big)} of {len(big)}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
