"""delta_rule variants against fla at 32 calls per graph (the grid's method: L2 flushed per
repetition, A B B A pairs, ratio = fla / kjit), bits of every variant compared with the old
kernel at the same DR_KSPLIT. Usage: python3 dr_ab.py OLD_SRC NEW_SRC"""
import statistics, sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../bench"))
import torch, kjit
import torch.nn.functional as F
from peers_grid import Timer, tuned_defines
from peers_kernels import graphed
from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule
engO = kjit.Engine(device=0, src=sys.argv[1])
engN = kjit.Engine(device=0, src=sys.argv[2])
tuned = tuned_defines("kernel_src/tuned_h200.toml", "delta_rule", "delta_rule", ("b", "h", "dk", "dv"))
timer = Timer()
names = []
def fn_of(eng, d):
    name = f"dr{len(names)}"; names.append(name)
    row = eng.prepare([{"name": name, "source": "delta_rule", "defines": d}])[0]
    if row["error"] is not None: raise RuntimeError(row["error"])
    return eng.function(name, "delta_rule_decode")
shapes = [tuple(map(int, s.split("x"))) for s in sys.argv[3].split(",")]
variants = [tuple(map(int, (v + "/0").split("/")[:4])) for v in sys.argv[4].split(",")]  # BV/K/VEC[/1: dk, dv compiled in]
calls = 32
for b, h, dk in shapes:
    dv, bh, scale = dk, b * h, dk ** -0.5
    torch.manual_seed(b * 1000 + h * 10 + dk)
    q = torch.randn(bh, dk, device="cuda"); k = F.normalize(torch.randn(bh, dk, device="cuda"), dim=-1)
    v = torch.randn(bh, dv, device="cuda"); g = -torch.rand(bh, device="cuda") * 0.1
    beta = torch.rand(bh, device="cuda"); s0 = torch.randn(bh, dk, dv, device="cuda")
    st, o = s0.clone(), torch.empty(bh, dv, device="cuda")
    peer = lambda: fused_recurrent_gated_delta_rule(
        q.view(b, 1, h, dk), k.view(b, 1, h, dk), v.view(b, 1, h, dv), g=g.view(b, 1, h),
        beta=beta.view(b, 1, h), scale=scale, initial_state=s0.view(b, h, dk, dv),
        output_final_state=True, use_qk_l2norm_in_kernel=False)
    gp = graphed(peer, calls=calls)
    td = tuned(("f32", b, h, dk, dv))
    arms = [("old table " + f"{td['DR_BV']}/{td['DR_KSPLIT']}", engO, dict(td))]
    arms += [(f"old {bv}/{ks}", engO, {"DR_BV": str(bv), "DR_KSPLIT": str(ks), "DR_MAX_DK": str(dk)}) for bv, ks, vec, c in variants if vec == 0]
    arms += [(f"new {bv}/{ks}/{vec}" + ("/c" if c else ""), engN, dict({"DR_BV": str(bv), "DR_KSPLIT": str(ks), "DR_VEC": str(vec), "DR_MAX_DK": str(dk)}, **({"DR_DK": str(dk), "DR_DV": str(dv)} if c else {}))) for bv, ks, vec, c in variants if vec > 0]
    ref = {}
    for label, eng, d in arms:
        ks_, bv_ = int(d["DR_KSPLIT"]), int(d["DR_BV"]); vec = int(d.get("DR_VEC", "1"))
        if dk % ks_ or bv_ // vec * ks_ > 1024: continue
        f = fn_of(eng, d)
        grid, block = (-(-dv // bv_), bh), (bv_ // vec, ks_)
        call = lambda f=f, grid=grid, block=block: f(grid, block, q, k, v, g, beta, st, o, dk, dv, scale)
        st.copy_(s0); call(); torch.cuda.synchronize()
        out = torch.cat([st.flatten(), o.flatten()]).clone()
        same = ""
        if label.startswith("old") and ks_ not in ref: ref[ks_] = out
        elif ks_ in ref: same = "same bits" if torch.equal(ref[ks_].view(torch.int32), out.view(torch.int32)) else "BITS DIFFER"
        gk = graphed(call, calls=calls)
        tp, tk, rs = timer.abba(gp, gk, 3, 10)
        r = 1 / statistics.median(rs)
        nbytes = (2 * bh * dk * dv + 2 * bh * dk + 2 * bh * dv + 2 * bh) * 4
        kus = statistics.median(tk) / calls
        print(f"b={b:<2} h={h:<2} dk={dk:<3} {label:22} kjit {kus:8.2f} fla {statistics.median(tp)/calls:8.2f} us  fla/kjit {r:5.3f} [{1/max(rs):5.3f} .. {1/min(rs):5.3f}] {nbytes/kus/1e3:6.0f} GB/s {same}", flush=True)
        del gk
    del gp
