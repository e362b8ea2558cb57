"""rms_norm decode rows (bf16, rows 1 and 32, n = 1024 and 4096) at the table's define set from
three sources: main's (the compiled-in width beside the run-time path and the element-by-element
fallback), one whose RMS_N kernel holds only the compiled-in width ("strict"), and that one with
RMS_ASSUME_ALIGNED (no element-by-element path: "aligned"); each against Liger, one call per
graph replay and 32 calls per graph, L2 flushed per repetition, A B B A pairs, ratio = Liger /
kjit (rms_strict_ab.txt, from the run of 2026-12-03, printed the inverse, kjit / Liger). Then
ncu's view: python3 rms_strict_ab.py MAIN_SRC STRICT_SRC [ncu]"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import KjitSource, Timer, rms_norm_peers, tuned_defines
from peers_kernels import graphed, profiled

main_eng, strict_eng = kjit.Engine(device=0, src=sys.argv[1]), kjit.Engine(device=0, src=sys.argv[2])
ncu = len(sys.argv) > 3
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
timer = Timer()
for rows, n in ((1, 1024), (1, 4096), (32, 1024), (32, 4096)) if not ncu else ((1, 1024),):
    x = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    d = dict({"RMS_BLOCK": "256"}, **tuned(("bf16", rows, n)))
    liger = rms_norm_peers(n, 1e-6)["liger"]
    peer = lambda: liger(x, w)
    arms = [("main", main_eng, d), ("strict", strict_eng, d),
            ("aligned", strict_eng, dict(d, RMS_ASSUME_ALIGNED="1"))]
    fns, first = [], None
    for label, eng, defs in arms:
        f = KjitSource(eng, "rms_norm", defs).rms_norm_launcher("bf16", x, w, y, 1e-6)
        y.zero_()
        f()
        torch.cuda.synchronize()
        same = ""
        if first is None:
            first = y.clone()
        else:
            same = "same bits" if torch.equal(first.view(torch.int16), y.view(torch.int16)) else "BITS DIFFER"
        fns.append(f)
        if ncu:
            continue
        line = f"rows={rows:<2} n={n:<4} {label:8} {same:9}"
        for calls in (1, 32):
            fa, fb = graphed(f, calls=calls), graphed(peer, calls=calls)
            ta, tb, rs = timer.abba(fa, fb, 3, 10)
            line += (f"  {calls:2}/graph kjit {statistics.median(ta) / calls:5.2f} liger "
                     f"{statistics.median(tb) / calls:5.2f} us {statistics.median(rs):5.3f} "
                     f"[{min(rs):5.3f} .. {max(rs):5.3f}]")
            del fa, fb
        print(line, flush=True)
    if ncu:
        profiled(fns + [peer])
