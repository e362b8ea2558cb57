"""rms_norm from several kernel sources at the table's define set for each shape, each timed
against the first source in A B B A pairs, 1 and 32 calls per graph (L2 flushed per repetition),
ratio = t(first) / t(arm) (> 1: the arm is faster), output bytes compared with the first's; and
Liger against the first source the same way (ratio = t(Liger) / t(first)). Usage (project root):
  python3 rms_ab.py TABLE DTYPE ROWSxN,... NAME=SRC[@DEF=V,...] ...  (the first is the reference;
  DEF=V pairs override the table's define set for that arm; V = n: the shape's row width;
  TABLE=PATH takes the arm's define set from another tuned table)"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import DTYPES, KjitSource, Timer, rms_norm_peers, tuned_defines
from peers_kernels import graphed

tuned = tuned_defines(sys.argv[1], "rms_norm", "rms_norm", ("rows", "n"))
dname = sys.argv[2]
shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[3].split(",")]
arms = []
for a in sys.argv[4:]:
    label, spec = a.split("=", 1)
    src, _, over = spec.partition("@")
    over = dict(kv.split("=") for kv in over.split(",") if kv)
    table = over.pop("TABLE", None)  # read once: the arm's define set per shape
    lookup = tuned_defines(table, "rms_norm", "rms_norm", ("rows", "n")) if table else None
    arms.append((label, kjit.Engine(device=0, src=src), over, lookup))
timer = Timer()
for rows, n in shapes:
    x = torch.randn(rows, n, device="cuda", dtype=DTYPES[dname])
    w = torch.randn(n, device="cuda", dtype=DTYPES[dname])
    d = tuned((dname, rows, n))
    liger = rms_norm_peers(n, 1e-6)["liger"]
    outs, calls_, sets = [], [], []
    for label, eng, over, lookup in arms:
        y = torch.zeros_like(x)
        base = lookup((dname, rows, n)) if lookup else d
        arm = dict(base, **{k: str(n) if v == "n" else v for k, v in over.items()})
        f = KjitSource(eng, "rms_norm", arm).rms_norm_launcher(dname, x, w, y, 1e-6)
        if arm != d:
            sets.append(f"  {label}: {arm}")
        f()
        torch.cuda.synchronize()
        outs.append(y.clone())
        calls_.append((label, f))
    print(f"{dname} rows={rows} n={n} {d}", *sets, sep="\n", flush=True)
    for calls in (1, 32):
        ref = graphed(calls_[0][1], calls=calls)
        line = f"  {calls:2}/graph"
        for (label, f), out in list(zip(calls_, outs))[1:] + [(("liger", None), None)]:
            g = graphed((lambda: liger(x, w)) if f is None else f, calls=calls)
            tr, ta, rs = timer.abba(ref, g, 3, 10)
            same = "" if out is None else (" same bits" if torch.equal(outs[0].view(torch.int16 if dname == "bf16" else torch.int32), out.view(torch.int16 if dname == "bf16" else torch.int32)) else " BITS DIFFER")
            r = statistics.median(rs) if f is None else 1 / statistics.median(rs)
            lo, hi = (min(rs), max(rs)) if f is None else (1 / max(rs), 1 / min(rs))
            line += (f"  {label} {statistics.median(ta) / calls:5.2f} us {calls_[0][0]} "
                     f"{statistics.median(tr) / calls:5.2f} us {r:5.3f} [{lo:5.3f} .. {hi:5.3f}]{same}")
            del g
        print(line, flush=True)
        del ref
