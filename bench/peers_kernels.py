"""The peers of kjit's kernels, timed on the GPU the same way kjit bench times its own (CUDA
events around each repetition, warm-up first, median and spread of the repetitions), in the
same call as kjit's numbers: torch rms_norm (eager and torch.compile), torch's grouped conv1d
(+ SiLU, Mamba style), and flash-linear-attention's fused_recurrent_gated_delta_rule with a
plain torch reference. Also the device-to-device copy bandwidth, the memory ceiling.
Prints one line per arm: `PEER name median_us spread GB/s`.
"""
import argparse
import statistics

import torch
import torch.nn.functional as F


def timed(fn, warmup=3, reps=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    med = statistics.median(ms)
    return med * 1000.0, (max(ms) - min(ms)) / med


def graphed(fn, calls=20):
    """fn captured `calls` times in one CUDA graph; the returned callable replays it. One call
    per replay, as kjit bench --graph and kjit sweep (graph = true) time theirs."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    return g.replay


def profiled(fns, calls=3):
    """Each of fns once (compiles, autotuning), then `calls` times each in turn: the launches a
    profiler (ncu -k ...) records, free of first-call work."""
    for f in fns:
        f()
    torch.cuda.synchronize()
    for f in fns:
        for _ in range(calls):
            f()
    torch.cuda.synchronize()


def timed_graph(fn, calls=1):
    us, spread = timed(graphed(fn, calls))
    return us / calls, spread


def report(name, us, spread, nbytes):
    print(f"PEER {name:<34} {us:10.2f} us  spread {spread:5.3f}  {nbytes / us / 1e3:8.1f} GB/s",
          flush=True)


def copy_bandwidth():
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    us, spread = timed(lambda: y.copy_(x), reps=20)
    report("device-to-device copy 1 GiB", us, spread, 2 * x.numel())


def rms_norm_arms():
    for dtype, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for rows in (8192, 1):
            x = torch.randn(rows, 7168, device="cuda", dtype=dtype)
            w = torch.randn(7168, device="cuda", dtype=dtype)
            nbytes = (2 * x.numel() + w.numel()) * x.element_size()
            eager = lambda: F.rms_norm(x, (7168,), w, 1e-6)
            report(f"rms_norm {name} {rows}x7168 torch eager", *timed(eager), nbytes)
            comp = torch.compile(lambda a, b: F.rms_norm(a, (7168,), b, 1e-6))
            report(f"rms_norm {name} {rows}x7168 torch.compile", *timed(lambda: comp(x, w)), nbytes)
            if rows == 1:
                report(f"rms_norm {name} {rows}x7168 torch eager (graph)", *timed_graph(eager), nbytes)


def conv1d_arms():
    B, C, T = 8, 4096, 1300
    for dtype, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x = torch.randn(B, C, T, device="cuda", dtype=dtype)
        w = torch.randn(C, 1, 4, device="cuda", dtype=dtype)
        bias = torch.randn(C, device="cuda", dtype=dtype)
        nbytes = 2 * x.numel() * x.element_size()
        fn = lambda: F.silu(F.conv1d(x, w, bias, padding=3, groups=C)[..., :T])
        report(f"conv1d {name} {B}x{C}x{T} torch grouped", *timed(fn), nbytes)
        try:
            from causal_conv1d import causal_conv1d_fn
            fn2 = lambda: causal_conv1d_fn(x, w.squeeze(1), bias, activation="silu")
            report(f"conv1d {name} {B}x{C}x{T} causal-conv1d", *timed(fn2), nbytes)
        except ImportError:
            pass


def delta_rule_arms():
    B, H, K, V = 1, 32, 128, 128
    q = torch.randn(B, 1, H, K, device="cuda")
    k = F.normalize(torch.randn(B, 1, H, K, device="cuda"), dim=-1)
    v = torch.randn(B, 1, H, V, device="cuda")
    g = -torch.rand(B, 1, H, device="cuda") * 0.1
    beta = torch.rand(B, 1, H, device="cuda")
    s0 = torch.randn(B, H, K, V, device="cuda")
    nbytes = 2 * s0.numel() * 4
    scale = K ** -0.5

    def plain():
        s = s0 * g[:, 0, :, None, None].exp()
        u = beta[:, 0, :, None] * (v[:, 0] - torch.einsum("bhkv,bhk->bhv", s, k[:, 0]))
        s = s + k[:, 0, :, :, None] * u[:, :, None, :]
        return torch.einsum("bhkv,bhk->bhv", s, q[:, 0] * scale), s

    def exact():
        d = lambda t: t.double()
        s = d(s0) * d(g)[:, 0, :, None, None].exp()
        u = d(beta)[:, 0, :, None] * (d(v)[:, 0] - torch.einsum("bhkv,bhk->bhv", s, d(k)[:, 0]))
        s = s + d(k)[:, 0, :, :, None] * u[:, :, None, :]
        return torch.einsum("bhkv,bhk->bhv", s, d(q)[:, 0] * scale), s

    o64, s64 = exact()
    rel = lambda a, b: ((a.double() - b).norm() / b.norm()).item()
    o_t, s_t = plain()
    print(f"torch fp32 vs float64: o {rel(o_t, o64):.2e}, state {rel(s_t, s64):.2e}")
    report(f"delta-rule decode B{B} H{H} {K}x{V} torch", *timed(plain), nbytes)
    report(f"delta-rule decode B{B} H{H} {K}x{V} torch (graph)", *timed_graph(plain), nbytes)
    try:
        from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule
        # beta by keyword: fla's fifth positional parameter is gk, a per-key decay [B, T, H, K]
        # (passing beta there read past it and left beta at its default of ones).
        fla = lambda: fused_recurrent_gated_delta_rule(
            q, k, v, g=g, beta=beta, scale=scale, initial_state=s0, output_final_state=True)
        o, s = fla()
        print(f"fla vs float64: o {rel(o[:, 0], o64):.2e}, state {rel(s, s64):.2e}")
        report(f"delta-rule decode B{B} H{H} {K}x{V} fla", *timed(fla), nbytes)
        report(f"delta-rule decode B{B} H{H} {K}x{V} fla (graph)", *timed_graph(fla), nbytes)
    except Exception as e:
        print(f"fla: not measured: {type(e).__name__}: {e}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("which", nargs="*", default=["copy", "rms_norm", "conv1d", "delta_rule"])
    for w in ap.parse_args().which:
        {"copy": copy_bandwidth, "rms_norm": rms_norm_arms, "conv1d": conv1d_arms,
         "delta_rule": delta_rule_arms}[w]()
