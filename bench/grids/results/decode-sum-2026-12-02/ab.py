"""Old source (A: argv[1]) against new (B: argv[2]), the table's defines per shape, same defines
both arms (argv[4] = "n": B also compiles the width in): outputs compared bit for bit, A B B A
timing. Rows <= 256: 32 calls per graph (per call); larger: one call per replay, L2 flushed per
repetition. argv[5]: 1 the first ten shapes, 2 the rest, 0 all.
Usage: python3 ab.py SRC_A SRC_B DTYPES [n|-] [0|1|2]"""
import statistics, sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../bench"))
import torch, kjit
from peers_grid import KjitSource, Timer, tuned_defines
from peers_kernels import graphed
engA = kjit.Engine(device=0, src=sys.argv[1])
engB = kjit.Engine(device=0, src=sys.argv[2])
specB = sys.argv[4] == "n" if len(sys.argv) > 4 else False
large = int(sys.argv[5]) if len(sys.argv) > 5 else 1
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
timer = Timer()
dtypes = sys.argv[3].split(",")
shapes = [(1, 1024), (32, 1024), (256, 1024), (1, 4096), (32, 4096), (256, 4096), (1, 7168), (32, 7168), (1, 16384), (32, 16384),
          (2048, 1024), (32768, 1024), (2048, 4096), (16384, 4096), (8192, 7168), (2048, 16384), (32768, 16384)]
shapes = shapes if large == 0 else shapes[:10] if large == 1 else shapes[10:]
ratios = []
for dname in dtypes:
    dt = {"bf16": torch.bfloat16, "f32": torch.float32}[dname]
    iv = torch.int16 if dname == "bf16" else torch.int32
    for rows, n in shapes:
        torch.manual_seed(rows * 7 + n)
        x = torch.randn(rows, n, device="cuda", dtype=dt); w = torch.randn(n, device="cuda", dtype=dt)
        d = dict(tuned((dname, rows, n)))
        y = torch.empty_like(x)  # one output buffer for both arms: no placement effect
        fa = KjitSource(engA, "rms_norm", d).rms_norm_launcher(dname, x, w, y, 1e-6)
        fb = KjitSource(engB, "rms_norm", dict(d, RMS_N=str(n)) if specB else d).rms_norm_launcher(dname, x, w, y, 1e-6)
        fa(); torch.cuda.synchronize(); ya = y.clone(); y.zero_(); fb(); torch.cuda.synchronize()
        same = torch.equal(ya.view(iv), y.view(iv))
        calls = 32 if rows <= 256 else 1
        ga, gb = graphed(fa, calls=calls), graphed(fb, calls=calls)
        ta, tb, rs = timer.abba(ga, gb, 3, 10 if calls > 1 else 20)
        r = statistics.median(rs)
        ratios.append(r)
        cfg = " ".join(f"{k[4:]}={v}" for k, v in sorted(d.items()))
        print(f"{dname:4} {rows:5}x{n:<5} {cfg:40} old {statistics.median(ta)/calls:8.3f} new {statistics.median(tb)/calls:8.3f} us"
              f"  old/new {1/r:5.3f} [{1/max(rs):5.3f} .. {1/min(rs):5.3f}]  {'same bits' if same else 'BITS DIFFER'}", flush=True)
        del ga, gb, x, ya, y
import math
print("geomean old/new", math.exp(-sum(map(math.log, ratios)) / len(ratios)))
