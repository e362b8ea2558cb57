"""conv1d fp32 at 512 steps, batch 1 (the grid's remaining fp32 misses): kjit's table kernel and
causal-conv1d, bias + silu, 3 calls each, for ncu. Usage (project root): python3 conv_ncu.py SRC"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from causal_conv1d import causal_conv1d_fn
from peers_grid import KjitSource, tuned_defines
from peers_kernels import profiled

engine = kjit.Engine(device=0, src=sys.argv[1])
tuned = tuned_defines("kernel_src/tuned_h200.toml", "conv1d", "conv1d", ("b", "c", "t"))
for b, c, t in ((1, 1024, 512), (1, 4096, 512), (1, 8192, 512)):
    x = torch.randn(b, c, t, device="cuda")
    w = torch.randn(c, 4, device="cuda") * 0.5
    bias = torch.randn(c, device="cuda")
    y = torch.empty_like(x)
    d = dict({"CONV_TILE": "16", "CONV_BLOCK": "64", "CONV_SEGS": "0"}, **(tuned(("f32", b, c, t)) or {}))
    print(b, c, t, d, flush=True)
    fs = (KjitSource(engine, "conv1d", d).launcher("f32", True, x, w, bias, y),
          lambda: causal_conv1d_fn(x, w, bias, activation="silu"))
    profiled(fs)
