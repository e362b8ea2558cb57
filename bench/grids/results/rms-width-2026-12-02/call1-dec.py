"""Decode rows: kjit variants against torch.compile's formula, 32 calls per graph (per call),
# (Run from the project root as .gl/exp/SCRIPT in the session; sys.path below points at bench/ from here.)
round robin over arms. Usage: python3 dec.py OUT_DIR"""
import statistics, sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import torch, kjit
from peers_grid import KjitSource, Timer, rms_norm_peers, tuned_defines
from peers_kernels import graphed

VARIANTS = [
    dict(RMS_BLOCK="32", RMS_WARP_ROWS="1", RMS_CACHE="4"),
    dict(RMS_BLOCK="32", RMS_WARP_ROWS="1", RMS_CACHE="8"),
    dict(RMS_BLOCK="32", RMS_WARP_ROWS="1", RMS_CACHE="16"),
    dict(RMS_BLOCK="64", RMS_WARP_ROWS="1", RMS_CACHE="8"),
    dict(RMS_BLOCK="128", RMS_WARP_ROWS="1", RMS_CACHE="8"),
    dict(RMS_BLOCK="32", RMS_CACHE="8", RMS_W_EARLY="1"),
    dict(RMS_BLOCK="32", RMS_CACHE="16", RMS_W_EARLY="1"),
    dict(RMS_BLOCK="64", RMS_CACHE="8", RMS_W_EARLY="1"),
    dict(RMS_BLOCK="128", RMS_CACHE="4", RMS_W_EARLY="1"),
    dict(RMS_BLOCK="128", RMS_CACHE="8", RMS_W_EARLY="1"),
    dict(RMS_BLOCK="256", RMS_CACHE="2", RMS_W_EARLY="1"),
    dict(RMS_BLOCK="256", RMS_CACHE="2"),
    dict(RMS_BLOCK="512", RMS_CACHE="1", RMS_W_EARLY="1"),
    dict(RMS_BLOCK="1024", RMS_CACHE="2", RMS_W_EARLY="1"),
]
name = lambda d: "B%s C%s%s%s" % (d["RMS_BLOCK"], d.get("RMS_CACHE", 8), " W" if d.get("RMS_W_EARLY") == "1" else "", (" R" + d["RMS_WARP_ROWS"]) if d.get("RMS_WARP_ROWS", "0") != "0" else "")
engine = kjit.Engine(device=0, src="kernel_src")
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
timer = Timer()
srcs = {}
def src(d):
    d = dict({"RMS_WIDTH": "1024"}, **d)
    k = tuple(sorted(d.items()))
    if k not in srcs:
        srcs[k] = KjitSource(engine, "rms_norm", d)
    return srcs[k]
dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["bf16", "f32"]
shapes = [(1, 1024), (32, 1024), (1, 4096), (32, 4096), (1, 16384), (32, 16384), (256, 1024)]
for dname in dtypes:
    dt = {"bf16": torch.bfloat16, "f32": torch.float32}[dname]
    for rows, n in shapes:
        torch.manual_seed(0)
        x = torch.randn(rows, n, device="cuda", dtype=dt); w = torch.randn(n, device="cuda", dtype=dt)
        peers = rms_norm_peers(n, 1e-6)
        arms = {}
        t = tuned((dname, rows, n))
        ref = None
        for label, d in [("table " + name(t), t)] + [(name(v), v) for v in VARIANTS]:
            y = torch.empty_like(x)
            f = src(d).rms_norm_launcher(dname, x, w, y, 1e-6)
            f(); torch.cuda.synchronize()
            if ref is None: ref = y.clone()
            same = torch.equal(y.view(torch.int16 if dname == "bf16" else torch.int32), ref.view(torch.int16 if dname == "bf16" else torch.int32))
            arms[label + ("" if same else " DIFF")] = graphed(f, calls=32)
        for p in ("compile_formula", "compile", "liger"):
            fn = peers[p]
            arms["peer " + p] = graphed(lambda fn=fn: fn(x, w), calls=32)
        times = {k: [] for k in arms}
        for _ in range(3):
            for k, g in arms.items():
                times[k] += timer.reps(g, 8)
        pmin = min(statistics.median(v) for k, v in times.items() if k.startswith("peer"))
        for k, v in sorted(times.items(), key=lambda kv: statistics.median(kv[1])):
            m = statistics.median(v) / 32
            print(f"{dname} {rows}x{n} {k:28} {m:6.3f} us/call  peer/this {pmin / 32 / m:5.3f}", flush=True)
        print(flush=True)
        del arms
