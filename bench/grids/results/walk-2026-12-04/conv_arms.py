"""conv1d arms from several sources against causal-conv1d, bias+silu, the grid's method (one call
per graph replay, L2 flushed per repetition, 3 A B B A pairs of 10; ratio = causal-conv1d / kjit);
every arm's output bytes compared with the first arm's. Usage (project root):
  python3 conv_arms.py "f32:1:1024:64,..." "label=SRC_DIR@TILE/BLOCK/SEGS[/FLAT],..." [none]
(none: no bias and no activation, CONV_SILU=0)
where @table takes the shape's entry of kernel_src/tuned_h200.toml (the defaults where none)."""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from causal_conv1d import causal_conv1d_fn
from peers_grid import DTYPES, KjitSource, Timer, tuned_defines
from peers_kernels import graphed

tuned = tuned_defines("kernel_src/tuned_h200.toml", "conv1d", "conv1d", ("b", "c", "t"))
default = {"CONV_TILE": "16", "CONV_BLOCK": "64", "CONV_SEGS": "0"}
timer = Timer()
silu = sys.argv[3:] != ["none"]
engines = {}
arms = []
for spec in sys.argv[2].split(","):
    label, rest = spec.split("=", 1)
    src, geo = rest.split("@")
    if src not in engines:
        engines[src] = kjit.Engine(device=0, src=src)
    arms.append((label, engines[src], geo))
for dname, b, c, t in (s.split(":") for s in sys.argv[1].split(",")):
    b, c, t = int(b), int(c), int(t)
    torch.manual_seed(b * 7 + c + t)
    dtype = DTYPES[dname]
    x = torch.randn(b, c, t, device="cuda", dtype=dtype)
    w = torch.randn(c, 4, device="cuda", dtype=dtype) * 0.5
    bias = torch.randn(c, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    if not silu:
        bias = None
    peer = graphed(lambda: causal_conv1d_fn(x, w, bias, activation="silu" if silu else None),
                   calls=1)
    first = None
    for label, eng, geo in arms:
        if geo == "table":
            d = dict(default, **(tuned((dname, b, c, t)) or {}))
        else:
            tile, block, segs, *flat = geo.split("/")
            d = {"CONV_TILE": tile, "CONV_BLOCK": block, "CONV_SEGS": segs}
            if flat:
                d["CONV_FLAT"] = flat[0]
        fn = KjitSource(eng, "conv1d", d).launcher(dname, silu, x, w, bias, y)
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
        config = (f"T{d['CONV_TILE']}xB{d['CONV_BLOCK']}xS{d['CONV_SEGS']}"
                  + ("xF" if d.get("CONV_FLAT", "0") != "0" else ""))
        print(f"{dname:4} b={b} c={c:<4} t={t:<4} {label:10} {config:12} kjit {statistics.median(tk):7.2f} "
              f"causal-conv1d {statistics.median(tp):7.2f} us  peer/kjit {r:5.3f} "
              f"[{1 / max(rs):5.3f} .. {1 / min(rs):5.3f}] {same}", flush=True)
        del g
    del peer, x, y
