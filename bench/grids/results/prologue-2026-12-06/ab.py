"""A B B A of conv1d_cl's old prologue (CONV_CL_NEW=0) against the new (=1) at each tuned
conv1d_cl entry's defines, with kjit bench --flush-l2 --graph (one call per replay)."""
import subprocess, sys, tomllib, os
t = tomllib.load(open("kernel_src/tuned_h200.toml", "rb"))
want = sys.argv[1]  # "small" or "large"
out = os.environ["OUT"]
for e in t["entry"]:
    if e.get("contract") != "conv1d_cl":
        continue
    s = e["shape"]
    mib = s["b"] * s["c"] * s["t"] * (2 if e["dtype"] == "bf16" else 4) * 2 / 2**20
    if (want == "small") != (mib < 64):
        continue
    shape = ",".join(f"{k}={v}" for k, v in s.items())
    args = ["build-py/tools/kjit", "bench", "conv1d_cl", "--src", "abtest/ab", "--dtype", e["dtype"],
            "--shape", shape, "--flush-l2", "--graph", "--pairs", "4", "--reps", "25"]
    for k, v in sorted(e["defines"].items()):
        args += ["-D", f"{k}={v}"]
    args += ["-D", "CONV_CL_NEW=0", "--vs", "CONV_CL_NEW=1"]
    r = subprocess.run(args, capture_output=True, text=True)
    tail = [l for l in r.stdout.splitlines() + r.stderr.splitlines() if l.strip()][-6:]
    print(e["dtype"], shape, f"{mib:.1f}MiB", " | ".join(tail), flush=True)
