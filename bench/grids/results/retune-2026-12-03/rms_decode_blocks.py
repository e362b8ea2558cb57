"""rms_norm bf16 decode row (rows = 1, n = 1024): kjit's kernel at the table's define set and at
blocks of 64 - 1024 threads, 3 calls each, for ncu (is the 512-thread block the ~0.6 us kjit
trails Liger's 128-thread program by?). Usage (project root): python3 rms_decode_blocks.py SRC"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import KjitSource
from peers_kernels import profiled

engine = kjit.Engine(device=0, src=sys.argv[1])
x = torch.randn(1, 1024, device="cuda", dtype=torch.bfloat16)
w = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
fs = []
for block in (64, 128, 256, 512, 1024):
    d = {"RMS_BLOCK": str(block), "RMS_CACHE": "1", "RMS_N": "1024", "RMS_WIDTH": "1024", "RMS_W_EARLY": "1"}
    print(block, d, flush=True)
    fs.append(KjitSource(engine, "rms_norm", d).rms_norm_launcher("bf16", x, w, y, 1e-6))
profiled(fs)
