"""delta_rule from several kernel sources at the table's define set for each grid shape, each
timed against the first source in A B B A pairs at 32 calls per graph (the grid's method: L2
flushed per repetition); ratio = t(first) / t(arm), so > 1 means the arm is faster. Every arm's
output and state bytes compared with the first's. Usage (project root):
  python3 dr_ab.py TABLE NAME=SRC NAME=SRC ...   (the first NAME=SRC is the reference)"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../.."))
import kjit
import torch
import tomllib
from peers_grid import KjitSource, Timer, delta_rule_inputs, tuned_defines
from peers_kernels import graphed

tuned = tuned_defines(sys.argv[1], "delta_rule", "delta_rule", ("b", "h", "dk", "dv"))
arms = [(a.split("=")[0], kjit.Engine(device=0, src=a.split("=", 1)[1])) for a in sys.argv[2:]]
with open(os.path.join(os.path.dirname(__file__), "../../delta_rule.toml"), "rb") as f:
    grid = tomllib.load(f)
timer, calls = Timer(), 32

for b in grid["b"]:
    for h in grid["h"]:
        for dk in grid["dk"]:
            dv, bh, scale = dk, b * h, dk ** -0.5
            torch.manual_seed(b * 1000 + h * 10 + dk)
            q, k, v, g, beta, s0 = delta_rule_inputs(bh, dk, dv)
            st, o = s0.clone(), torch.empty(bh, dv, device="cuda")
            d = tuned(("f32", b, h, dk, dv))
            config = (f"BV{d['DR_BV']}xK{d['DR_KSPLIT']}xV{d.get('DR_VEC', '1')}"
                      + ("c" if d.get("DR_DK", "0") != "0" else ""))
            launch = []
            for label, eng in arms:
                call = KjitSource(eng, "delta_rule", d).delta_rule_launcher(q, k, v, g, beta, st, o, scale)
                st.copy_(s0)
                call()
                torch.cuda.synchronize()
                launch.append((label, call, torch.cat([st.flatten(), o.flatten()]).clone()))
            ref_label, ref_call, ref_out = launch[0]
            gr = graphed(ref_call, calls=calls)
            line = f"b={b:<2} h={h:<2} dk={dk:<3} {config:10}"
            for label, call, out in launch[1:]:
                same = "same bits" if torch.equal(ref_out.view(torch.int32), out.view(torch.int32)) else "BITS DIFFER"
                ga = graphed(call, calls=calls)
                tr, ta, rs = timer.abba(gr, ga, 3, 10)
                r = 1 / statistics.median(rs)
                line += (f"  {label} {statistics.median(ta) / calls:6.2f} us {ref_label} "
                         f"{statistics.median(tr) / calls:6.2f} us {r:5.3f} [{1 / max(rs):5.3f} .. {1 / min(rs):5.3f}] {same}")
                del ga
            print(line, flush=True)
            del gr
