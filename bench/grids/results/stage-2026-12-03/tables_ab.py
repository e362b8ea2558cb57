"""rms_norm at two tuned tables' define sets, per shape: the second table's kernel timed against
the first's in A B B A pairs, 1 and 32 calls per graph (L2 flushed per repetition), ratio =
t(first) / t(second) (> 1: the second is faster), output bytes compared; Liger against the
second the same way (ratio = t(Liger) / t(second)). Usage (project root):
  python3 tables_ab.py OLD_TABLE NEW_TABLE DTYPE ROWSxN,..."""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import DTYPES, KjitSource, Timer, rms_norm_peers, tuned_defines
from peers_kernels import graphed

old, new = (tuned_defines(p, "rms_norm", "rms_norm", ("rows", "n")) for p in sys.argv[1:3])
dname = sys.argv[3]
shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[4].split(",")]
eng = kjit.Engine(device=0, src="kernel_src")
timer = Timer()
bits = torch.int16 if dname == "bf16" else torch.int32
for rows, n in shapes:
    x = torch.randn(rows, n, device="cuda", dtype=DTYPES[dname])
    w = torch.randn(n, device="cuda", dtype=DTYPES[dname])
    do, dn = old((dname, rows, n)), new((dname, rows, n))
    ys = [torch.zeros_like(x), torch.zeros_like(x)]
    fs = [KjitSource(eng, "rms_norm", d).rms_norm_launcher(dname, x, w, y, 1e-6) for d, y in zip((do, dn), ys)]
    for f in fs:
        f()
    torch.cuda.synchronize()
    same = "same bits" if torch.equal(ys[0].view(bits), ys[1].view(bits)) else "BITS DIFFER"
    print(f"{dname} rows={rows} n={n} old {do} new {dn} {same}", flush=True)
    liger = rms_norm_peers(n, 1e-6)["liger"]
    for calls in (1, 32):
        a, b, l = graphed(fs[0], calls=calls), graphed(fs[1], calls=calls), graphed(lambda: liger(x, w), calls=calls)
        to, tn, rs = timer.abba(a, b, 3, 10)
        tn2, tl, ls = timer.abba(b, l, 3, 10)
        print(f"  {calls:2}/graph  old {statistics.median(to) / calls:7.2f} us  new {statistics.median(tn) / calls:7.2f} us"
              f"  {1 / statistics.median(rs):5.3f} [{1 / max(rs):5.3f} .. {1 / min(rs):5.3f}]"
              f"  liger {statistics.median(tl) / calls:7.2f} us  {statistics.median(ls):5.3f} [{min(ls):5.3f} .. {max(ls):5.3f}]", flush=True)
        del a, b, l
