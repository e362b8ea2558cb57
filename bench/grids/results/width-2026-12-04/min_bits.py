"""Which arms of call 2 give kernel_src's bits: bf16 and fp32 rows x n, the table's define set
(RMS_N = n at these shapes), it at RMS_N = 0, and the diagnostic kernel (rms_min.cu) at
RMS_MIN = 3 (the exact root) with one chunk per thread. Prints, per arm, the elements whose
bits differ from the table's and the largest difference in units of the output's last place."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
from peers_grid import DTYPES, KjitSource, tuned_defines

tuned = tuned_defines("kernel_src/tuned_h200.toml", "rms_norm", "rms_norm", ("rows", "n"))
main, diag = kjit.Engine(device=0, src="kernel_src"), kjit.Engine(device=0, src=".gl/exp/rms_min")
for dname, rows, n, block in (("bf16", 1, 1024, 128), ("bf16", 32, 1024, 128), ("f32", 1, 1024, 256),
                              ("f32", 32, 1024, 256)):
    torch.manual_seed(0)
    x = torch.randn(rows, n, device="cuda", dtype=DTYPES[dname])
    w = torch.randn(n, device="cuda", dtype=DTYPES[dname])
    d = tuned((dname, rows, n))
    arms = [("table", main, d), ("table RMS_N=0", main, dict(d, RMS_N="0")),
            ("table B128 C8", main, dict(d, RMS_BLOCK="128", RMS_CACHE="8")),
            ("diag RMS_MIN=3", diag, dict(d, RMS_BLOCK=str(block), RMS_MIN="3"))]
    outs = []
    for label, eng, defs in arms:
        y = torch.zeros_like(x)
        KjitSource(eng, "rms_norm", defs).rms_norm_launcher(dname, x, w, y, 1e-6)()
        torch.cuda.synchronize()
        outs.append((label, y))
    ints = torch.int16 if dname == "bf16" else torch.int32
    base = outs[0][1].view(ints).long()
    line = f"{dname} {rows} x {n}:"
    for label, y in outs[1:]:
        diff = (y.view(ints).long() - base).abs()
        line += f"  [{label}] {int((diff > 0).sum())} differ, max {int(diff.max())} ulp"
    print(line, flush=True)
