"""Launches, on the stream, bf16 1 x 1024 rms_norm N times each: the diagnostic kernel
(.gl/exp/rms_min at RMS_MIN=0, B128), the table's kernel and Liger's, for ncu to profile.
Usage (project root): python3 min_ncu.py N"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import KjitSource, rms_norm_peers, tuned_defines

n_launch = int(sys.argv[1])
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
x = torch.randn(1, 1024, device="cuda", dtype=torch.bfloat16)
w = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
y = torch.zeros_like(x)
d = tuned(("bf16", 1, 1024))
arms = [KjitSource(kjit.Engine(device=0, src="kernel_src"), "rms_norm", d).rms_norm_launcher("bf16", x, w, y, 1e-6),
        KjitSource(kjit.Engine(device=0, src=".gl/exp/rms_min"), "rms_norm",
                   dict(d, RMS_BLOCK="128", RMS_MIN="0")).rms_norm_launcher("bf16", x, w, y, 1e-6)]
liger = rms_norm_peers(1024, 1e-6)["liger"]
arms.append(lambda: liger(x, w))
for f in arms:
    for _ in range(n_launch):
        f()
    torch.cuda.synchronize()
