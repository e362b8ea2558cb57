"""bf16 1x1024: kjit's old (srcA) table kernel, then torch.compile's formula; 4 calls each, for ncu."""
# (Run from the project root as .gl/exp/SCRIPT in the session; sys.path below points at bench/ from here.)
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import torch, kjit
from peers_grid import KjitSource, rms_norm_peers, tuned_defines
engine = kjit.Engine(device=0, src=sys.argv[1])
tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
x = torch.randn(1, 1024, device="cuda", dtype=torch.bfloat16); w = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
a = KjitSource(engine, "rms_norm", tuned(("bf16", 1, 1024))).rms_norm_launcher("bf16", x, w, y, 1e-6)
p = rms_norm_peers(1024, 1e-6)["compile_formula"]
for _ in range(3):
    a(); p(x, w)
torch.cuda.synchronize()
for f in (a, lambda: p(x, w)):
    for _ in range(4): f()
torch.cuda.synchronize()
