"""conv1d at short rows: the previous source (its table pick, or the defaults) and the new one at
several tiles against causal-conv1d, bias+silu, the grid's method (one call per graph replay,
L2 flushed per repetition, A B B A pairs, ratio = causal-conv1d / kjit); every arm's bytes
compared with the old table arm's. Usage (project root):
  python3 conv_ab.py OLD_SRC NEW_SRC "f32:1:1024:64,..." "4/128/1,16/64/1,..." (TILE/BLOCK/SEGS)"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from causal_conv1d import causal_conv1d_fn
from peers_grid import DTYPES, KjitSource, Timer, tuned_defines
from peers_kernels import graphed

eng_old = kjit.Engine(device=0, src=sys.argv[1])
eng_new = kjit.Engine(device=0, src=sys.argv[2])
tuned = tuned_defines("kernel_src/tuned_h200.toml", "conv1d", "conv1d", ("b", "c", "t"))
timer = Timer()
shapes = [s.split(":") for s in sys.argv[3].split(",")]
variants = [v.split("/") for v in sys.argv[4].split(",")]
default = {"CONV_TILE": "16", "CONV_BLOCK": "64", "CONV_SEGS": "0"}
for dname, b, c, t in shapes:
    b, c, t = int(b), int(c), int(t)
    torch.manual_seed(b * 7 + c + t)
    dtype = DTYPES[dname]
    x = torch.randn(b, c, t, device="cuda", dtype=dtype)
    w = torch.randn(c, 4, device="cuda", dtype=dtype) * 0.5
    bias = torch.randn(c, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    peer = graphed(lambda: causal_conv1d_fn(x, w, bias, activation="silu"), calls=1)
    table = dict(default, **(tuned((dname, b, c, t)) or {}))
    arms = [("old table", eng_old, table), ("old defaults", eng_old, default)]
    arms += [("new " + "/".join(v), eng_new,
              {"CONV_TILE": v[0], "CONV_BLOCK": v[1], "CONV_SEGS": v[2]}) for v in variants]
    arms.append(("new table", eng_new, table))
    first = None
    for label, eng, d in arms:
        fn = KjitSource(eng, "conv1d", d).launcher(dname, True, x, w, bias, y)
        y.zero_()
        fn()
        torch.cuda.synchronize()
        out = y.clone()
        same = ""
        if first is None:
            first = out
        else:
            same = "same bits" if torch.equal(first.view(torch.uint8), out.view(torch.uint8)) else "BITS DIFFER"
        g = graphed(fn, calls=1)
        tp, tk, rs = timer.abba(peer, g, 3, 10)
        r = 1 / statistics.median(rs)
        config = f"T{d['CONV_TILE']}xB{d['CONV_BLOCK']}xS{d['CONV_SEGS']}"
        print(f"{dname:4} b={b} c={c:<4} t={t:<4} {label:14} {config:12} kjit {statistics.median(tk):7.2f} "
              f"causal-conv1d {statistics.median(tp):7.2f} us  peer/kjit {r:5.3f} "
              f"[{1 / max(rs):5.3f} .. {1 / min(rs):5.3f}] {same}", flush=True)
        del g
    del peer, x, y
