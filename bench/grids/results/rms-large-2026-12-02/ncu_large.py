"""rms_norm at two large shapes (f32 16384 x 4096, bf16 32768 x 8192): kjit's table kernel, then
torch.compile's formula kernel and Liger's, 3 calls each, for ncu. Usage (project root):
  python3 ncu_large.py SRC"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import KjitSource, rms_norm_peers, tuned_defines
from peers_kernels import profiled

engine = kjit.Engine(device=0, src=sys.argv[1])
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
for dname, dtype, rows, n in (("f32", torch.float32, 16384, 4096), ("bf16", torch.bfloat16, 32768, 8192)):
    x = torch.randn(rows, n, device="cuda", dtype=dtype)
    w = torch.randn(n, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    d = dict({"RMS_BLOCK": "256"}, **tuned((dname, rows, n)))
    print(dname, rows, n, d, flush=True)
    a = KjitSource(engine, "rms_norm", d).rms_norm_launcher(dname, x, w, y, 1e-6)
    peers = rms_norm_peers(n, 1e-6)
    fs = (a, lambda: peers["compile_formula"](x, w), lambda: peers["liger"](x, w))
    profiled(fs)
