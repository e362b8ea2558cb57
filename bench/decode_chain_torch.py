"""The decode chain of bench/decode_chain.hpp written with torch and the peers, for bench_plan's
figures: per layer F.rms_norm -> causal_conv1d_update (state in place) -> fla's
fused_recurrent_gated_delta_rule -> F.rms_norm, hidden 4096 (32 heads x 128), fp32, batch 1.
fla returns the final state as a new tensor; a decode step carries it to the next step, so the
"step" arm copies it back into the layer's state (one more kernel); "no state" leaves it out
(not the same step: a lower bound). Each arm: GPU us per decode step, events around --reps
replays of one CUDA graph of the whole step (torch.cuda.graph), and the same in eager launches;
medians of --pairs ABBA pairs. Usage: python3 decode_chain_torch.py [--reps 200] [--pairs 5]
"""
import argparse

import torch
import torch.nn.functional as F

HEADS, HEAD_DIM = 32, 128
HIDDEN = HEADS * HEAD_DIM


def layers_for(n_layers, keep_state):
    from causal_conv1d import causal_conv1d_update
    from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule

    g = torch.Generator(device="cuda").manual_seed(1)
    u = lambda *shape, lo, hi: torch.rand(*shape, device="cuda", generator=g) * (hi - lo) + lo
    x = u(1, HIDDEN, lo=-1, hi=1)
    norm_w = u(HIDDEN, lo=0.9, hi=1.1)
    gate = u(1, 1, HEADS, lo=-0.2, hi=-0.05)
    beta = u(1, 1, HEADS, lo=0.002, hi=0.01)
    layers = [dict(w=u(HIDDEN, 4, lo=-0.5, hi=0.5), b=u(HIDDEN, lo=-0.1, hi=0.1),
                   conv=u(1, HIDDEN, 3, lo=-0.5, hi=0.5),
                   state=u(1, HEADS, HEAD_DIM, HEAD_DIM, lo=-0.1, hi=0.1))
              for _ in range(n_layers)]
    scale = HEAD_DIM ** -0.5

    def step():
        h = x
        for L in layers:
            t1 = F.rms_norm(h, (HIDDEN,), norm_w, 1e-6)
            t2 = causal_conv1d_update(t1, L["conv"], L["w"], L["b"], activation="silu")
            qkv = t2.view(1, 1, HEADS, HEAD_DIM)
            o, ht = fused_recurrent_gated_delta_rule(
                qkv, qkv, qkv, g=gate, beta=beta, scale=scale, initial_state=L["state"],
                output_final_state=keep_state, use_qk_l2norm_in_kernel=False)
            if keep_state:
                L["state"].copy_(ht)
            h = F.rms_norm(o.view(1, HIDDEN), (HIDDEN,), norm_w, 1e-6)
        return h

    return step


def gpu_us(body, reps):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps):
        body()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) * 1000 / reps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--kernels", type=int, action="append")
    a = ap.parse_args()
    print(f"decode_chain_torch on {torch.cuda.get_device_name()}: torch {torch.__version__}, "
          f"GPU us per decode step, {a.reps} steps per measurement, {a.pairs} ABBA pairs")
    for n in a.kernels or [8, 16, 32, 64]:
        arms = {}
        for keep in (True, False):
            step = layers_for(n // 4, keep)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):  # warm-up (Triton compiles) outside the capture
                for _ in range(3):
                    step()
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
            name = "step" if keep else "no state"
            arms[f"graph ({name})"] = graph.replay
            arms[f"eager ({name})"] = step
        names = list(arms)
        for body in arms.values():
            gpu_us(body, a.reps // 4 + 1)
        us = {k: [] for k in names}
        for _ in range(a.pairs):
            for k in names + names[::-1]:
                us[k].append(gpu_us(arms[k], a.reps))
        print(f"\n{n} kjit-kernel equivalents ({n // 4} layers):")
        for k in names:
            v = sorted(us[k])
            med = v[len(v) // 2]
            print(f"  torch {k:<18} {med:8.2f} us per step (spread {(v[-1] - v[0]) / med:.3f})")
            print(f"ROW kernels={n} arm=torch {k} us={med:.3f}")


if __name__ == "__main__":
    main()
