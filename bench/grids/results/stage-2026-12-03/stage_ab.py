"""rms_norm with its rows staged through shared memory (RMS_STAGES) against the table's kernel
from main's source, per shape: each staged arm (block, stages, blocks per SM of the grid) timed
against the table's in A B B A pairs, one call per graph replay, the L2 flushed per repetition;
ratio = t(table's) / t(arm) (> 1: the arm is faster); output bytes compared with the table's.
Liger the same way (ratio = t(Liger) / t(table's)). Usage (project root):
  python3 stage_ab.py TABLE MAIN_SRC DTYPE ROWSxN[,...] B:S:M[,...]
  (B threads per block, S stages, M blocks per SM; RMS_CACHE is the row's chunks per thread)"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import DTYPES, KjitSource, Timer, rms_norm_peers, tuned_defines
from peers_kernels import graphed

table, main_src, dname = sys.argv[1:4]
shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[4].split(",")]
arms = [tuple(int(v) for v in a.split(":")) for a in sys.argv[5].split(",")]
tuned = tuned_defines(table, "rms_norm", "rms_norm", ("rows", "n"))
main_eng, new_eng = kjit.Engine(device=0, src=main_src), kjit.Engine(device=0, src="kernel_src")
sms = torch.cuda.get_device_properties(0).multi_processor_count
timer = Timer()
bits = torch.int16 if dname == "bf16" else torch.int32
size = 2 if dname == "bf16" else 4
for rows, n in shapes:
    x = torch.randn(rows, n, device="cuda", dtype=DTYPES[dname])
    w = torch.randn(n, device="cuda", dtype=DTYPES[dname])
    d = tuned((dname, rows, n))
    y0 = torch.zeros_like(x)
    ref = graphed(KjitSource(main_eng, "rms_norm", d).rms_norm_launcher(dname, x, w, y0, 1e-6), calls=1)
    ref()
    torch.cuda.synchronize()
    mib = 2 * rows * n * size / 2**20
    print(f"{dname} rows={rows} n={n} ({mib:.0f} MiB moved) table {d}", flush=True)
    liger = rms_norm_peers(n, 1e-6)["liger"]
    runs = [("liger", None, None)]
    chunks = n * size // 16
    for block, stages, per_sm in arms:
        cache = -(-chunks // block)
        if cache > 16:
            continue
        dd = {"RMS_BLOCK": str(block), "RMS_CACHE": str(cache), "RMS_STAGES": str(stages),
              "RMS_WIDTH": "1024", "RMS_N": str(n)}
        fn, _ = KjitSource(new_eng, "rms_norm", dd).function(f"rms_norm_{dname}")
        smem = (stages + 1) * chunks * 16
        grid = min(rows, sms * per_sm)
        y = torch.zeros_like(x)
        f = lambda fn=fn, y=y, grid=grid, block=block, smem=smem: fn(grid, block, x, w, y, rows, n, 1e-6, smem=smem)
        try:
            f()
            torch.cuda.synchronize()
        except Exception as e:  # a grid or shared memory the device refuses
            print(f"  B{block} S{stages} M{per_sm}: {e}", flush=True)
            continue
        runs.append((f"B{block} C{cache} S{stages} M{per_sm} grid {grid} smem {smem >> 10} KiB", f, y))
    for label, f, y in runs:
        g = graphed((lambda: liger(x, w)) if f is None else f, calls=1)
        tr, ta, rs = timer.abba(ref, g, 3, 10)
        if f is None:
            r, lo, hi, same = statistics.median(rs), min(rs), max(rs), ""
        else:
            r, lo, hi = 1 / statistics.median(rs), 1 / max(rs), 1 / min(rs)
            same = " same bits" if torch.equal(y0.view(bits), y.view(bits)) else " BITS DIFFER"
        print(f"  {label:42} {statistics.median(ta):8.2f} us  table {statistics.median(tr):8.2f} us"
              f"  {r:5.3f} [{lo:5.3f} .. {hi:5.3f}]{same}", flush=True)
        del g
