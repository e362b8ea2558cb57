"""rms_norm decode rows (1 and 32 rows, bf16, n = 1024 and 4096): kjit's table kernel, Liger's
and torch.compile's formula kernel, 3 calls each, for ncu (the 0.2 - 0.3 us per call kjit trails
in 32-call graphs). Usage (project root): python3 rms_decode_ncu.py SRC"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import KjitSource, rms_norm_peers, tuned_defines
from peers_kernels import profiled

engine = kjit.Engine(device=0, src=sys.argv[1])
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
for rows, n in ((1, 1024), (1, 4096), (32, 4096)):
    x = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    d = dict({"RMS_BLOCK": "256"}, **tuned(("bf16", rows, n)))
    print(rows, n, d, flush=True)
    peers = rms_norm_peers(n, 1e-6)
    profiled((KjitSource(engine, "rms_norm", d).rms_norm_launcher("bf16", x, w, y, 1e-6),
              lambda: peers["liger"](x, w), lambda: peers["compile_formula"](x, w)))
