"""A B B A of each tuned conv1d_cl entry of this GPU moving >= 64 MiB against the contract's
defaults (L16 S1 B64, no eager loads), in one process per shape: kjit bench --flush-l2 --graph
--pairs 4 --reps 25, arm A the entry's defines, arm B the same with the tuned knobs set back to
their defaults. B/A > 1: the entry is faster."""
import os, subprocess, sys, tomllib

DEFAULTS = {"CONV_CL_STEPS": "16", "CONV_CL_SEGS": "1", "CONV_BLOCK": "64", "CONV_CL_EAGER": "0",
            "CONV_CL_CH": "4"}
table = tomllib.load(open(sys.argv[1], "rb"))
gpu = sys.argv[2]
for e in table["entry"]:
    if e.get("contract") != "conv1d_cl" or e.get("gpu") != gpu:
        continue
    s = e["shape"]
    mib = s["b"] * s["c"] * s["t"] * (2 if e["dtype"] == "bf16" else 4) * 2 / 2**20
    if mib < 64:
        continue
    shape = ",".join(f"{k}={v}" for k, v in s.items())
    args = ["build-py/tools/kjit", "bench", "conv1d_cl", "--src", "kernel_src", "--dtype",
            e["dtype"], "--shape", shape, "--flush-l2", "--graph", "--pairs", "4", "--reps", "25"]
    for k, v in sorted(e["defines"].items()):
        args += ["-D", f"{k}={v}"]
    for k, v in DEFAULTS.items():
        args += ["--vs", f"{k}={v}"]
    r = subprocess.run(args, capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() + r.stderr.splitlines() if l.strip()]
    print(f"== {e['dtype']} {shape} {mib:.0f} MiB rc {r.returncode}", flush=True)
    print("\n".join(lines[-12:]), flush=True)
