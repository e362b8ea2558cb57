"""rms_norm at large rows: arms (kernel source + define overrides on the table's set) each
against the table's kernel (main's source) in A B B A pairs, one call per graph replay, the L2
flushed per repetition; output bytes compared with the table's; and the faster torch.compile form
(of F.rms_norm and of the formula, timed alone first) against the table's the same way.
Ratio = t(table) / t(arm): > 1, the arm is faster. Usage (project root, PYTHONPATH with
build-py/python and bench):
  python3 big_ab.py TABLE DTYPE ROWSxN,... MAIN_SRC NAME=SRC[@DEF=V,...] ..."""
import os
import statistics
import sys

import kjit
import torch
from peers_grid import DTYPES, KjitSource, Timer, rms_norm_peers, tuned_defines
from peers_kernels import graphed

tuned = tuned_defines(sys.argv[1], "rms_norm", "rms_norm", ("rows", "n"))
dname = sys.argv[2]
shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[3].split(",")]
main_engine = kjit.Engine(device=0, src=sys.argv[4])
arms = []
for a in sys.argv[5:]:
    label, spec = a.split("=", 1)
    src, _, over = spec.partition("@")
    arms.append((label, kjit.Engine(device=0, src=src),
                 dict(kv.split("=") for kv in over.split(",") if kv)))
timer = Timer()
bits = torch.int16 if dname == "bf16" else torch.int32
for rows, n in shapes:
    x = torch.randn(rows, n, device="cuda", dtype=DTYPES[dname])
    w = torch.randn(n, device="cuda", dtype=DTYPES[dname])
    d = tuned((dname, rows, n))
    y0 = torch.zeros_like(x)
    ref = KjitSource(main_engine, "rms_norm", d).rms_norm_launcher(dname, x, w, y0, 1e-6)
    ref()
    torch.cuda.synchronize()
    gref = graphed(ref, calls=1)
    peers = rms_norm_peers(n, 1e-6)
    alone = {}
    for name in ("compile", "compile_formula"):
        g = graphed(lambda: peers[name](x, w), calls=1)
        timer.reps(g, 3)
        alone[name] = statistics.median(timer.reps(g, 20))
        del g
    best = min(alone, key=alone.get)
    print(f"{dname} rows={rows} n={n} table {d}", flush=True)
    results = [(best, graphed(lambda: peers[best](x, w), calls=1), None, None)]
    for label, eng, over in arms:
        y = torch.zeros_like(x)
        try:
            f = KjitSource(eng, "rms_norm", dict(d, **over)).rms_norm_launcher(dname, x, w, y, 1e-6)
            f()
            torch.cuda.synchronize()
        except Exception as e:  # a define set the kernel refuses: say so and go on
            print(f"  {label}: {e}", flush=True)
            continue
        same = torch.equal(y0.view(bits), y.view(bits))
        # The launcher (and its output y) stays referenced as long as its graph: capturing the
        # next graph empties torch's allocator cache, which would unmap a dropped y.
        results.append((label, graphed(f, calls=1), same, f))
    for label, g, same, _ in results:
        tr, ta, rs = timer.abba(gref, g, 3, 10)
        r = 1 / statistics.median(rs)
        print(f"  {label:22} {statistics.median(ta):8.2f} us  table {statistics.median(tr):8.2f} us"
              f"  table/arm {r:5.3f} [{1 / max(rs):5.3f} .. {1 / min(rs):5.3f}]"
              + ("" if same is None else ("  same bits" if same else "  BITS DIFFER")), flush=True)
    del results, gref, x, y0
