"""The decode-row harness question, one process per shape: kjit (table pick, and the same without
RMS_N: half the code) and torch.compile, graphs of 32 calls, timed three ways: L2 flushed before
each repetition (the grid's), warm with a host sync per repetition, warm back to back (every
repetition queued before the first is read, as kjit bench). Round robin, 6 rounds. Per call, us."""
import statistics, sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../bench"))
import torch, kjit
from peers_grid import KjitSource, Timer, rms_norm_peers, tuned_defines
from peers_kernels import graphed

engine = kjit.Engine(device=0, src="kernel_src")
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
scratch = Timer().scratch
def synced(fn, n, flush):
    out = []
    for _ in range(n):
        if flush: scratch.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        out.append(a.elapsed_time(b) * 1000.0)
    return out
def queued(fn, n):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for a, b in ev:
        a.record(); fn(); b.record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1000.0 for a, b in ev]
for dname, rows, n in (("bf16", 1, 1024), ("bf16", 32, 4096), ("f32", 1, 16384), ("f32", 32, 7168)):
    dt = {"bf16": torch.bfloat16, "f32": torch.float32}[dname]
    d = tuned((dname, rows, n))
    x = torch.randn(rows, n, device="cuda", dtype=dt); w = torch.randn(n, device="cuda", dtype=dt)
    y = torch.empty_like(x); y0 = torch.empty_like(x)
    ours = KjitSource(engine, "rms_norm", d).rms_norm_launcher(dname, x, w, y, 1e-6)
    plain = KjitSource(engine, "rms_norm", dict(d, RMS_N="0")).rms_norm_launcher(dname, x, w, y0, 1e-6)
    peer = rms_norm_peers(n, 1e-6)["compile"]
    peer(x, w)
    arms = {"kjit": graphed(ours, calls=32), "kjit RMS_N=0": graphed(plain, calls=32),
            "compile": graphed(lambda: peer(x, w), calls=32)}
    res = {}
    for r in range(6):
        for a, g in arms.items():
            for how in ("flush", "synced", "queued"):
                v = queued(g, 10) if how == "queued" else synced(g, 10, how == "flush")
                res.setdefault((a, how), []).extend(v)
    print(f"{dname} {rows}x{n} {d}", flush=True)
    for a in arms:
        print(f"   {a:14}" + "".join(f"  {how} {statistics.median(res[(a, how)]) / 32:.3f}" for how in ("flush", "synced", "queued")), flush=True)
