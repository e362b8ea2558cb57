"""kjit's kernels against their strongest peers over a grid of shapes (bench/grids/*.toml), all
in this process with one timer:
CUDA events around each call, the L2 flushed before each (a 256 MiB write outside the timed
region), warm-ups first, and A B B A blocks of repetitions per case.
conv1d: a one-call CUDA graph replay per arm (unless --stream), against causal_conv1d_fn.
conv1d_update (one decode token, the state rolled in place): against causal_conv1d_update, timed
two ways: `--calls` calls captured in one graph, per call (launch cost amortized, the data warm
after the first call), and one call per replay (cold L2, one replay's overhead).
kjit's arm goes through kjit's Python module (`import kjit`: the kernel specialized with the
defines start-up would take, launched on torch's current stream with the contract's grid), the
peers through their own Python entry points: one timer for all. delta_rule: one decode step against fla's fused_recurrent_gated_delta_rule, both
checked against the float64 recurrence. rms_norm: against torch eager, torch.compile (static
shapes, F.rms_norm and the written-out formula) and Liger, each timed alone, kjit then in A B B A
pairs against the fastest. Each case also compares the two outputs (max abs difference over max abs
value; for the update the rolled states too) so that both compute the same thing.

Prints one line per case and a summary; --csv writes the rows. Usage (GPU machine):
  PYTHONPATH=build/python python3 bench/peers_grid.py bench/grids/conv1d.toml --src kernel_src
"""
import argparse
import csv
import math
import os
import statistics
import sys
import tomllib

import kjit
import torch

from peers_kernels import graphed

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


class Timer:
    def __init__(self, flush_mib=256):
        self.scratch = torch.empty(flush_mib << 20, dtype=torch.uint8, device="cuda")

    def reps(self, fn, n):
        """n timings of fn in microseconds, the L2 flushed before each."""
        out = []
        for _ in range(n):
            self.scratch.zero_()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) * 1000.0)
        return out

    def abba(self, fa, fb, pairs, reps, warmup=3):
        """Per pair: A, B, B, A blocks of `reps`; returns (all A, all B, per-pair tB / tA)."""
        for _ in range(warmup):
            fa()
            fb()
        all_a, all_b, ratios = [], [], []
        for _ in range(pairs):
            a = self.reps(fa, reps)
            b = self.reps(fb, 2 * reps)
            a += self.reps(fa, reps)
            all_a += a
            all_b += b
            ratios.append(statistics.median(b) / statistics.median(a))
        return all_a, all_b, ratios


def copy_gbps(timer):
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    us = statistics.median(timer.reps(lambda: y.copy_(x), 20))
    return 2 * x.numel() / us / 1e3


class KjitSource:
    """A kernel source specialized by kjit's Python module (one prepared kernel per define set,
    through the compile cache), launched on torch's current stream (the capture stream in a
    capture) with its contracts' grids."""
    names = []  # every prepared kernel's name, one engine-wide namespace

    def __init__(self, engine, source, defines):
        self.engine, self.source, self.defines = engine, source, dict(defines)
        self.prepared = {}

    def function(self, entry, **extra):
        d = dict(self.defines, **extra)
        key = tuple(sorted(d.items()))
        if key not in self.prepared:
            name = f"{self.source}_{len(KjitSource.names)}"
            KjitSource.names.append(name)
            row = self.engine.prepare([{"name": name, "source": self.source, "defines": d}])[0]
            want = " ".join(f"{k}={v}" for k, v in sorted(d.items()))
            if row["error"] is not None or row["defines"] != want:
                raise RuntimeError(f"kjit prepared {self.source} with {row['defines']}, "
                                   f"not {d}: {row['error']}")
            self.prepared[key] = name
        return self.engine.function(self.prepared[key], entry), d

    def launch(self, contract, shape, dtype, values, **extra):
        """A call of `contract`'s main launch at `shape` with this source's define set (and
        `extra` over it): the entry point, grid and block kjit.plan gives (the contract's, as
        every verb launches; a case the kernel cannot run is a kjit.ConfigError), its parameters
        taken by name from `values` over the plan's scalars."""
        d = dict(self.defines, **extra)
        plan = kjit.plan(contract, shape, dtype, d, src=self.engine.src)
        step = next(s for s in plan["steps"] if s["kind"] == "launch" and s["main"])
        fn, _ = self.function(step["entry"], **extra)
        grid, block = step["grid"], step["block"]
        args = [dict(plan["scalars"], **values)[p] for p in step["params"]]
        return lambda: fn(grid, block, *args)

    def launcher(self, dtype, silu, x, w, bias, y):
        b, c, t = x.shape
        return self.launch("conv1d", {"b": b, "c": c, "t": t}, dtype,
                           {"x": x, "w": w, "bias": bias, "state_in": None, "y": y,
                            "state_out": None}, CONV_SILU=str(int(silu)))

    def cl_launcher(self, dtype, silu, x, w, bias, state_in, y, state_out):
        b, t, c = x.shape
        return self.launch("conv1d_cl", {"b": b, "c": c, "t": t}, dtype,
                           {"x": x, "w": w, "bias": bias, "state_in": state_in, "y": y,
                            "state_out": state_out}, CONV_SILU=str(int(silu)))

    def update_launcher(self, dtype, silu, x, w, bias, state, y):
        b, c = x.shape
        return self.launch("conv1d_update", {"b": b, "c": c}, dtype,
                           {"x": x, "w": w, "bias": bias, "state": state, "y": y},
                           CONV_SILU=str(int(silu)))

    def rms_norm_launcher(self, dtype, x, w, y, eps):
        rows, n = x.shape
        return self.launch("rms_norm", {"rows": rows, "n": n}, dtype,
                           {"x": x, "w": w, "y": y, "eps": eps})

    def delta_rule_launcher(self, q, k, v, g, beta, state, o, scale):
        bh, dk = q.shape  # batch x heads, flat: the contract counts b * h heads
        return self.launch("delta_rule", {"b": bh, "h": 1, "dk": dk, "dv": v.shape[1]}, None,
                           {"q": q, "k": k, "v": v, "g": g, "beta": beta, "state": state,
                            "o": o, "scale": scale})


def tuned_defines(path, source, kernel, keys):
    """(dtype, *shape values in `keys` order) -> defines, for this GPU's entries of `kernel`:
    the entry start-up would take (TunedTable::lookup in jit/tuned_table.cpp): the exact shape,
    else each bucket rule of the table in order ("pow2": the key rounded up to a power of two,
    exactly; "nearest": the closest recorded value on a log scale with the other keys equal,
    the larger on a tie); None when there is none. A GPU with no entry of the kernel and dtype
    takes the first other GPU's of the same arch, as start-up does."""
    entries, buckets = [], []
    gpu = torch.cuda.get_device_name()
    if path:
        with open(path, "rb") as f:
            table = tomllib.load(f)
        major, minor = torch.cuda.get_device_capability()
        for e in table.get("entry", []):
            # conv1d_update's entries sit under its source, conv1d.cu, naming the contract.
            if (e["kernel"] == source and e.get("contract", source) == kernel
                    and e["arch"] == f"sm_{major}{minor}"):
                d = {k: v for k, v in e["defines"].items() if k != "CONV_SILU"}
                entries.append((e["gpu"], e.get("dtype", ""), e["shape"], d))
        buckets = [b for b in table.get("bucket", [])
                   if b["kernel"] == source and b.get("contract", source) == kernel]

    def lookup(key):
        dtype, shape = key[0], dict(zip(keys, key[1:]))
        gpus = [g for g, t, _, _ in entries if t == dtype]
        on = gpu if gpu in gpus else (gpus[0] if gpus else None)
        fits = [(s, d) for g, t, s, d in entries if g == on and t == dtype]
        exact = lambda want: next((d for s, d in fits if s == want), None)
        if (d := exact(shape)) is not None:
            return d
        for b in buckets:
            k = b["key"]
            if k not in shape:
                continue
            if b["rule"] == "pow2":
                rounded = dict(shape, **{k: 1 << max(shape[k] - 1, 0).bit_length()})
                if (d := exact(rounded)) is not None:
                    return d
                continue
            near = [(abs(math.log(s[k] / shape[k])), -s[k], d) for s, d in fits
                    if s.keys() == shape.keys() and s[k] > 0 and shape[k] > 0
                    and all(s[x] == shape[x] for x in shape if x != k)]
            if near:
                # Distances equal up to rounding are a tie, which the larger value wins.
                best = min(near, key=lambda x: x[0])[0]
                return min((x for x in near if x[0] - best < 1e-9), key=lambda x: x[1])[2]
        return None
    return lookup


def relative_diff(got, want):
    return ((got.float() - want.float()).abs().max() /
            want.float().abs().max().clamp_min(1e-30)).item()


def conv1d_rows(a, grid, kjit_for, timer, ceiling):
    from causal_conv1d import causal_conv1d_fn
    for dname in a.dtype or grid["dtypes"]:
        dtype = DTYPES[dname]
        for b in grid["b"]:
            for c in grid["c"]:
                for t in grid["t"]:
                    x = torch.randn(b, c, t, device="cuda", dtype=dtype)
                    w = torch.randn(c, 4, device="cuda", dtype=dtype) * 0.5
                    bias_t = torch.randn(c, device="cuda", dtype=dtype)
                    y = torch.empty_like(x)
                    nbytes = 2 * x.numel() * x.element_size()
                    kjit, used = kjit_for((dname, b, c, t))
                    config = (f"T{used['CONV_TILE']}xB{used['CONV_BLOCK']}xS{used['CONV_SEGS']}"
                              + ("xF" if used.get("CONV_FLAT", "0") != "0" else ""))
                    for form in grid["forms"]:
                        silu = "silu" in form
                        bias = bias_t if "bias" in form else None
                        act = "silu" if silu else None
                        ours = kjit.launcher(dname, silu, x, w, bias, y)
                        peer = lambda: causal_conv1d_fn(x, w, bias, activation=act)
                        ours()
                        ref = peer()
                        torch.cuda.synchronize()
                        diff = relative_diff(y, ref)
                        yield time_conv_case(a, timer, ceiling, ours, peer, nbytes, diff,
                                             dict(dtype=dname, b=b, c=c, t=t, form=form,
                                                  config=config))
                    del x, y


def time_conv_case(a, timer, ceiling, ours, peer, nbytes, diff, key):
    """One conv1d case, kjit against causal-conv1d in A B B A pairs: one call per graph replay
    (neither arm's host cost, Python and the peer's checks and allocation, shows in its device
    time), or stream launches with --stream. Prints the case's line; returns its row."""
    fa, fb = (ours, peer) if a.stream else (graphed(ours, calls=1), graphed(peer, calls=1))
    ta, tb, ratios = timer.abba(fa, fb, a.pairs, a.reps)
    del fa, fb
    ka, pb, r = statistics.median(ta), statistics.median(tb), statistics.median(ratios)
    row = dict(key, kjit_us=ka, peer_us=pb, speedup=r, low=min(ratios), high=max(ratios),
               kjit_gbps=nbytes / ka / 1e3, copy_share=nbytes / ka / 1e3 / ceiling, diff=diff,
               mib=nbytes / 2**20)
    print(f"{key['dtype']:4} b={key['b']:<2} c={key['c']:<4} t={key['t']:<4} {key['form']:16} "
          f"{key['config']:9} kjit {ka:9.2f} us causal-conv1d {pb:9.2f} us  "
          f"peer/kjit {r:5.3f} [{min(ratios):5.3f} .. {max(ratios):5.3f}]  "
          f"{row['kjit_gbps']:7.1f} GB/s ({100 * row['copy_share']:4.1f} % of copy)  "
          f"diff {diff:.1e}", flush=True)
    return row


def conv1d_cl_rows(a, grid, kjit_for, timer, ceiling):
    """Channel-last ([B, T, C], Mamba2's xBC) against causal_conv1d_fn on the same memory (its
    channel-last path: x viewed [B, C, T] with stride 1 over C); forms with "+states" pass the
    initial states and write the final states ([B, 3, C] memory) in both arms."""
    from causal_conv1d import causal_conv1d_fn
    for dname in a.dtype or grid["dtypes"]:
        dtype = DTYPES[dname]
        for b in grid["b"]:
            for c in grid["c"]:
                for t in grid["t"]:
                    x = torch.randn(b, t, c, device="cuda", dtype=dtype)
                    w = torch.randn(c, 4, device="cuda", dtype=dtype) * 0.5
                    bias_t = torch.randn(c, device="cuda", dtype=dtype)
                    s_in = torch.randn(b, 3, c, device="cuda", dtype=dtype)
                    y = torch.empty_like(x)
                    s_out, peer_s_out = torch.empty_like(s_in), torch.empty_like(s_in)
                    kjit, used = kjit_for((dname, b, c, t))
                    config = (f"L{used['CONV_CL_STEPS']}xS{used['CONV_CL_SEGS']}"
                              f"xE{used['CONV_CL_CH']}xB{used['CONV_BLOCK']}"
                              + ("+eager" if used.get("CONV_CL_EAGER") == "1" else ""))
                    for form in grid["forms"]:
                        silu = "silu" in form
                        bias = bias_t if "bias" in form else None
                        act = "silu" if silu else None
                        states = "states" in form
                        nbytes = ((2 * x.numel() + (2 * s_in.numel() if states else 0))
                                  * x.element_size())
                        ours = kjit.cl_launcher(dname, silu, x, w, bias, s_in if states else None,
                                                y, s_out if states else None)
                        if states:
                            peer = lambda: causal_conv1d_fn(
                                x.transpose(1, 2), w, bias, initial_states=s_in.transpose(1, 2),
                                return_final_states=True,
                                final_states_out=peer_s_out.transpose(1, 2), activation=act)[0]
                        else:
                            peer = lambda: causal_conv1d_fn(x.transpose(1, 2), w, bias,
                                                            activation=act)
                        ours()
                        ref = peer().transpose(1, 2)
                        torch.cuda.synchronize()
                        diff = relative_diff(y, ref)
                        if states:
                            diff = max(diff, relative_diff(s_out, peer_s_out))
                        yield time_conv_case(a, timer, ceiling, ours, peer, nbytes, diff,
                                             dict(dtype=dname, b=b, c=c, t=t, form=form,
                                                  config=config))
                    del x, y


def update_rows(a, grid, kjit_for, timer, ceiling):
    from causal_conv1d import causal_conv1d_update
    for dname in a.dtype or grid["dtypes"]:
        dtype = DTYPES[dname]
        for b in grid["b"]:
            for c in grid["c"]:
                x = torch.randn(b, c, device="cuda", dtype=dtype)
                w = torch.randn(c, 4, device="cuda", dtype=dtype) * 0.5
                bias_t = torch.randn(c, device="cuda", dtype=dtype)
                state0 = torch.randn(b, c, 3, device="cuda", dtype=dtype)
                ours_state, peer_state = state0.clone(), state0.clone()
                y = torch.empty_like(x)
                # x, y and the state read and written; w and bias once per channel.
                nbytes = (2 * b * c + 2 * 3 * b * c + 5 * c) * x.element_size()
                kjit, used = kjit_for((dname, b, c))
                config = f"B{used['CONV_BLOCK']}"
                for form in grid["forms"]:
                    silu = "silu" in form
                    bias = bias_t if "bias" in form else None
                    act = "silu" if silu else None
                    ours = kjit.update_launcher(dname, silu, x, w, bias, ours_state, y)
                    peer = lambda: causal_conv1d_update(x, peer_state, w, bias, activation=act)
                    ours_state.copy_(state0)
                    peer_state.copy_(state0)
                    ours()
                    ref = peer()
                    torch.cuda.synchronize()
                    diff = max(relative_diff(y, ref), relative_diff(ours_state, peer_state))
                    row = dict(dtype=dname, b=b, c=c, form=form, config=config, diff=diff)
                    line = time_both(a, timer, ours, peer, row,
                                     f"{dname:4} b={b:<2} c={c:<4} {form:9} {config:5}")
                    row.update(kjit_gbps=nbytes / row["many_kjit_us"] / 1e3,
                               copy_share=nbytes / row["many_kjit_us"] / 1e3 / ceiling,
                               mib=nbytes / 2**20)
                    print(line + f"  diff {diff:.1e}", flush=True)
                    yield row
                del x, y, ours_state, peer_state


def time_both(a, timer, ours, peer, row, line):
    """Many calls per graph (per call; the primary figure), then one call per replay."""
    for mode, calls in (("many", a.calls), ("one", 1)):
        fa, fb = graphed(ours, calls=calls), graphed(peer, calls=calls)
        ta, tb, ratios = timer.abba(fa, fb, a.pairs, a.reps)
        del fa, fb
        ka, pb = statistics.median(ta) / calls, statistics.median(tb) / calls
        r = statistics.median(ratios)
        row.update({f"{mode}_kjit_us": ka, f"{mode}_peer_us": pb, f"{mode}_speedup": r,
                    f"{mode}_low": min(ratios), f"{mode}_high": max(ratios)})
        line += (f"  {mode}: kjit {ka:7.2f} us peer {pb:7.2f} us "
                 f"{r:5.3f} [{min(ratios):5.3f} .. {max(ratios):5.3f}]")
    row.update(speedup=row["many_speedup"], low=row["many_low"])
    return line


def delta_rule_inputs(bh, dk, dv):
    """q, k (unit rows), v, g (log decays in (-0.1, 0]), beta in [0, 1) and a state, for bh heads."""
    import torch.nn.functional as F
    return (torch.randn(bh, dk, device="cuda"),
            F.normalize(torch.randn(bh, dk, device="cuda"), dim=-1),
            torch.randn(bh, dv, device="cuda"), -torch.rand(bh, device="cuda") * 0.1,
            torch.rand(bh, device="cuda"), torch.randn(bh, dk, dv, device="cuda"))


def delta_rule_rows(a, grid, kjit_for, timer, ceiling):
    """One decode step of every head against fla's fused_recurrent_gated_delta_rule, from the
    same state; both arms checked against the float64 recurrence first."""
    from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule
    for b in grid["b"]:
        for h in grid["h"]:
            for dk in grid["dk"]:
                dv, bh, scale = dk, b * h, dk ** -0.5
                q, k, v, g, beta, s0 = delta_rule_inputs(bh, dk, dv)
                ours_state, o = s0.clone(), torch.empty(bh, dv, device="cuda")
                kjit, used = kjit_for(("f32", b, h, dk, dv))
                config = (f"BV{used['DR_BV']}xK{used['DR_KSPLIT']}xV{used['DR_VEC']}"
                          + ("c" if used.get("DR_DK", "0") != "0" else ""))
                ours = kjit.delta_rule_launcher(q, k, v, g, beta, ours_state, o, scale)
                # fla's layout [B, T, H, K], the state [B, H, K, V]; beta by keyword (its fifth
                # positional parameter is gk, a per-key decay).
                peer = lambda: fused_recurrent_gated_delta_rule(
                    q.view(b, 1, h, dk), k.view(b, 1, h, dk), v.view(b, 1, h, dv),
                    g=g.view(b, 1, h), beta=beta.view(b, 1, h), scale=scale,
                    initial_state=s0.view(b, h, dk, dv), output_final_state=True,
                    use_qk_l2norm_in_kernel=False)
                ours()
                po, ps = peer()
                torch.cuda.synchronize()
                d = lambda t: t.double()
                s = d(s0) * d(g).exp()[:, None, None]
                u = d(beta)[:, None] * (d(v) - torch.einsum("nkv,nk->nv", s, d(k)))
                s = s + d(k)[:, :, None] * u[:, None, :]
                o64 = torch.einsum("nkv,nk->nv", s, d(q) * scale)
                rel = lambda x, y: ((d(x) - y).norm() / y.norm()).item()
                err = dict(kjit_o=rel(o, o64), kjit_s=rel(ours_state, s), fla_o=rel(po.view(bh, dv), o64),
                           fla_s=rel(ps.view(bh, dk, dv), s))
                # Repeated steps roll both states on (kjit's in place); the bytes stay the same.
                nbytes = (2 * bh * dk * dv + 2 * bh * dk + 2 * bh * dv + 2 * bh) * 4
                row = dict(dtype="f32", b=b, h=h, dk=dk, dv=dv, config=config, **err,
                           diff=max(err.values()))
                line = time_both(a, timer, ours, peer, row,
                                 f"b={b:<2} h={h:<2} dk=dv={dk:<3} {config:9}")
                row.update(kjit_gbps=nbytes / row["many_kjit_us"] / 1e3,
                           copy_share=nbytes / row["many_kjit_us"] / 1e3 / ceiling,
                           mib=nbytes / 2**20)
                print(line + f"  {row['kjit_gbps']:6.0f} GB/s  vs float64: kjit o "
                      f"{err['kjit_o']:.1e} s {err['kjit_s']:.1e}, fla o {err['fla_o']:.1e} "
                      f"s {err['fla_s']:.1e}", flush=True)
                yield row


def rms_norm_peers(n, eps):
    """The rms_norm peers of one width, name -> fn(x, w): torch eager, torch.compile (static
    shapes, compiled afresh for this shape) of F.rms_norm and of the written-out formula, and
    Liger (casting mode "gemma": fp32 throughout and one rounding at the end, kjit's numerics)."""
    import torch.nn.functional as F
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction

    def formula(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)
    eager = lambda x, w: F.rms_norm(x, (n,), w, eps)
    # A fresh compile per shape: dynamo's cache would otherwise fill after a few shapes and fall
    # back to eager (or to a dynamic-shape kernel).
    torch._dynamo.reset()
    return {"eager": eager,
            "compile": torch.compile(eager, dynamic=False),
            "compile_formula": torch.compile(formula, dynamic=False),
            "liger": lambda x, w: LigerRMSNormFunction.apply(x, w, eps, 0.0, "gemma", False)}


def rms_norm_rows(a, grid, kjit_for, timer, ceiling):
    """Every peer timed (one call per graph replay, L2 flushed); kjit against the fastest in
    A B B A pairs. Decode-size rows (<= 32) also many calls per graph, per call."""
    eps = 1e-6
    for dname in a.dtype or grid["dtypes"]:
        dtype = DTYPES[dname]
        for n in grid["n"]:
            for rows in grid["rows"]:
                x = torch.randn(rows, n, device="cuda", dtype=dtype)
                w = torch.randn(n, device="cuda", dtype=dtype)
                y = torch.empty_like(x)
                nbytes = (2 * rows * n + n) * x.element_size()
                kjit, used = kjit_for((dname, rows, n))
                config = (f"B{used['RMS_BLOCK']}xC{used.get('RMS_CACHE', 8)}"
                          + ("xN" if used.get("RMS_N", "0") != "0" else "")
                          + ("xW" if used.get("RMS_W_EARLY") == "1" else "")
                          + (f"xR{used['RMS_WARP_ROWS']}" if int(used.get("RMS_WARP_ROWS", "0"))
                             else ""))
                ours = kjit.rms_norm_launcher(dname, x, w, y, eps)
                ours()
                peers, diffs, alone = rms_norm_peers(n, eps), {}, {}
                for name, fn in peers.items():
                    ref = fn(x, w)
                    torch.cuda.synchronize()
                    diffs[name] = relative_diff(y, ref)
                    g = graphed(lambda: fn(x, w), calls=1)
                    timer.reps(g, 3) # warm-up: the GPU idled through the compiles
                    alone[name] = statistics.median(timer.reps(g, a.reps))
                    del g
                best = min(alone, key=alone.get)
                peer = lambda: peers[best](x, w)
                row = dict(dtype=dname, rows=rows, n=n, config=config, peer=best,
                           **{f"{k}_us": v for k, v in alone.items()},
                           diff=max(diffs.values()), mib=nbytes / 2**20)
                fa, fb = graphed(ours, calls=1), graphed(peer, calls=1)
                ta, tb, ratios = timer.abba(fa, fb, a.pairs, a.reps)
                del fa, fb
                ka, pb, r = statistics.median(ta), statistics.median(tb), statistics.median(ratios)
                row.update(kjit_us=ka, peer_us=pb, speedup=r, low=min(ratios), high=max(ratios),
                           kjit_gbps=nbytes / ka / 1e3, copy_share=nbytes / ka / 1e3 / ceiling)
                line = (f"{dname:4} rows={rows:<5} n={n:<5} {config:8} kjit {ka:8.2f} us "
                        f"{best} {pb:8.2f} us  peer/kjit {r:5.3f} [{min(ratios):5.3f} .. "
                        f"{max(ratios):5.3f}]  {row['kjit_gbps']:7.1f} GB/s "
                        f"({100 * row['copy_share']:4.1f} % of copy)  peers "
                        + " ".join(f"{k} {v:.2f}" for k, v in alone.items()))
                if rows <= 32:
                    for calls in (a.calls,):
                        fa, fb = graphed(ours, calls=calls), graphed(peer, calls=calls)
                        ta, tb, ratios = timer.abba(fa, fb, a.pairs, a.reps)
                        del fa, fb
                        row.update(many_kjit_us=statistics.median(ta) / calls,
                                   many_peer_us=statistics.median(tb) / calls,
                                   many_speedup=statistics.median(ratios), many_low=min(ratios))
                        line += (f"  {calls} per graph: kjit {row['many_kjit_us']:.2f} us peer "
                                 f"{row['many_peer_us']:.2f} us {row['many_speedup']:.3f}")
                print(line + f"  diff {row['diff']:.1e}", flush=True)
                yield row
                del x, y, peers


KERNELS = {"conv1d": ("conv1d", ("b", "c", "t"), conv1d_rows),
           "conv1d_update": ("conv1d", ("b", "c"), update_rows),
           "conv1d_cl": ("conv1d", ("b", "c", "t"), conv1d_cl_rows),
           "delta_rule": ("delta_rule", ("b", "h", "dk", "dv"), delta_rule_rows),
           "rms_norm": ("rms_norm", ("rows", "n"), rms_norm_rows)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("grid")
    ap.add_argument("--src", default="kernel_src")
    ap.add_argument("-D", dest="defines", action="append", default=[],
                    help="NAME=VALUE for kjit's compile (default: the contract's defaults)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--calls", type=int, default=32,
                    help="conv1d_update: calls captured in one graph for the per-call figure")
    ap.add_argument("--csv")
    ap.add_argument("--dtype", action="append", help="only these dtypes")
    ap.add_argument("--table", help="a tuned table: each shape's entry (as start-up looks it "
                    "up: exact, else the table's nearest bucket; this GPU) gives kjit's defines "
                    "there, else the defaults")
    ap.add_argument("--stream", action="store_true",
                    help="conv1d: time stream launches instead of one-call graph replays")
    a = ap.parse_args()
    with open(a.grid, "rb") as f:
        grid = tomllib.load(f)
    source, keys, rows_of = KERNELS[grid["kernel"]]
    defines = dict(kv.split("=", 1) for kv in a.defines)
    tuned = tuned_defines(a.table, source, grid["kernel"], keys)
    torch.manual_seed(0)
    timer = Timer()
    ceiling = copy_gbps(timer)
    print(f"device-to-device copy: {ceiling:.1f} GB/s; kjit: -D {defines or 'none'} over the "
          "contract's defaults", flush=True)
    engine = kjit.Engine(device=torch.cuda.current_device(), src=a.src)
    print(f"kjit {kjit.__version__} ({os.path.dirname(kjit.__file__)}), sources {engine.sources}",
          flush=True)
    kjits = {}

    def kjit_for(key):
        # The table's entry at this shape over -D over the contract's defaults, as kjit.plan
        # merges them (the define set kjit compiles, every define named).
        shape = dict(zip(keys, key[1:]))
        d = kjit.plan(grid["kernel"], shape, key[0], dict(defines, **(tuned(key) or {})),
                      src=a.src)["defines"]
        k = tuple(sorted(d.items()))
        if k not in kjits:
            kjits[k] = KjitSource(engine, source, d)
        return kjits[k], d
    rows = []
    try:
        for row in rows_of(a, grid, kjit_for, timer, ceiling):
            rows.append(row)
    except KeyboardInterrupt: # `timeout -s INT`: summarize and write what has run
        print(f"interrupted after {len(rows)} cases", flush=True)
    if not rows:
        print("summary: no case ran")
        return 1
    passed = [r for r in rows if r["speedup"] >= 1.0 and r["low"] >= 0.97]
    geo = math.exp(sum(math.log(r["speedup"]) for r in rows) / len(rows))
    big = [r for r in rows if r["mib"] >= 256]
    print(f"summary: {len(rows)} cases, {len(passed)} pass (peer/kjit >= 1.0, low >= 0.97); "
          f"geomean peer/kjit {geo:.3f}; worst {min(r['speedup'] for r in rows):.3f}; "
          f"cases >= 256 MiB at >= 90 % of copy: "
          f"{sum(r['copy_share'] >= 0.9 for r in big)} of {len(big)}; "
          f"largest output difference {max(r['diff'] for r in rows):.1e}")
    if "one_speedup" in rows[0]:
        geo1 = math.exp(sum(math.log(r["one_speedup"]) for r in rows) / len(rows))
        print(f"summary, one call per replay: geomean peer/kjit {geo1:.3f}; "
              f"{sum(r['one_speedup'] >= 1.0 and r['one_low'] >= 0.97 for r in rows)} pass")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            fields = list(dict.fromkeys(k for r in rows for k in r)) # some rows have more
            wr = csv.DictWriter(f, fieldnames=fields)
            wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
