"""Why the grid's 32-calls-per-graph figure for kjit (1.93 us at bf16 1 x 1024) sits above kjit
bench --graph --calls 32 (1.52 us): kjit and torch.compile in torch graphs of 32 calls, each timed
with and without an L2 flush before the repetition, round robin. Usage: python3 tgap.py"""
import statistics, sys, os, subprocess
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../bench"))
import torch, kjit
from peers_grid import KjitSource, Timer, rms_norm_peers, tuned_defines
from peers_kernels import graphed

engine = kjit.Engine(device=0, src="kernel_src")
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
timer = Timer()
scratch = timer.scratch
def reps(fn, n, flush):
    out = []
    for _ in range(n):
        if flush: scratch.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        out.append(a.elapsed_time(b) * 1000.0)
    return out
for dname, rows, n in (("bf16", 1, 1024), ("bf16", 32, 4096), ("f32", 1, 16384), ("f32", 32, 7168)):
    dt = {"bf16": torch.bfloat16, "f32": torch.float32}[dname]
    d = tuned((dname, rows, n))
    src = KjitSource(engine, "rms_norm", d)
    x = torch.randn(rows, n, device="cuda", dtype=dt); w = torch.randn(n, device="cuda", dtype=dt)
    y = torch.empty_like(x)
    ours = src.rms_norm_launcher(dname, x, w, y, 1e-6)
    peer = rms_norm_peers(n, 1e-6)["compile"]
    peer(x, w)
    arms = {"kjit": graphed(ours, calls=32), "compile": graphed(lambda: peer(x, w), calls=32)}
    res = {(a, f): [] for a in arms for f in (0, 1)}
    for r in range(6):
        for a, g in arms.items():
            for f in (0, 1):
                res[(a, f)] += reps(g, 10, f)
    line = f"{dname} {rows}x{n} {d}:"
    for (a, f), v in res.items():
        line += f"  {a} {'flush' if f else 'warm'} {statistics.median(v) / 32:.3f}"
    print(line, flush=True)
    D = []
    for k, v in d.items(): D += ["-D", f"{k}={v}"]
    for mode in (["--graph", "--calls", "32"], ["--graph", "--calls", "32", "--flush-l2"]):
        out = subprocess.run(["build-py/tools/kjit", "bench", "rms_norm", "--src", "kernel_src", "--dtype", dname,
                              "--shape", f"rows={rows},n={n}", "--reps", "60", "--warmup", "5", *D, *mode],
                             capture_output=True, text=True).stdout
        med = [l for l in out.splitlines() if "floor" in l]
        print("   kjit bench", " ".join(mode), med[0].split("measured")[1][:30] if med else out[-300:], flush=True)
