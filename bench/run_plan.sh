#!/usr/bin/env bash
# The decode chain as a launch plan against torch's CUDA graph of the same step: bench_plan and
# bench/decode_chain_torch.py alternated (A B A B, one process each), then per chain length the
# median of each arm over the rounds and kjit's speedup. Needs torch, causal-conv1d and fla.
# Usage: KJIT_BUILD_DIR=build bash bench/run_plan.sh [rounds (2)]; raw output under $OUT/plan.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${KJIT_BUILD_DIR:-build}
out=${OUT:-/tmp}/plan
mkdir -p "$out"
rm -f "$out"/kjit_*.txt "$out"/torch_*.txt
for r in $(seq 1 "${1:-2}"); do
    "$build/bench/bench_plan" >"$out/kjit_$r.txt"
    python3 "$root/bench/decode_chain_torch.py" >"$out/torch_$r.txt"
done
cat "$out/kjit_1.txt"
python3 - "$out" <<'PY'
import glob, re, statistics, sys
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/kjit_*.txt") + glob.glob(sys.argv[1] + "/torch_*.txt")):
    for line in open(f):
        if not line.startswith("ROW "):
            continue
        n = int(re.search(r"kernels=(\d+)", line).group(1))
        if "arm=" in line:  # ROW kernels=64 arm=torch graph (step) us=240.652
            arm = line.split("arm=torch ")[1].split(" us=")[0]
            rows.setdefault(n, {}).setdefault("torch " + arm, []).append(float(line.split(" us=")[1]))
        else:
            kv = dict(x.split("=") for x in line[4:].split())
            for k in ("stream", "stream_pdl", "plan", "plan_pdl", "set_args_us", "block_copy_us"):
                rows.setdefault(n, {}).setdefault("kjit " + k, []).append(float(kv[k]))
med = lambda v: statistics.median(v)
print("\nkernels | kjit stream | kjit plan | kjit plan+PDL | torch graph (step) | torch graph "
      "(no state) | step / plan+PDL | no state / plan+PDL | set_args us | block us")
for n in sorted(rows):
    r = rows[n]
    p = med(r["kjit plan_pdl"])
    t, t0 = med(r["torch graph (step)"]), med(r["torch graph (no state)"])
    print(f"{n} | {med(r['kjit stream']):.2f} | {med(r['kjit plan']):.2f} | {p:.2f} | {t:.2f} | "
          f"{t0:.2f} | {t / p:.3f} | {t0 / p:.3f} | {med(r['kjit set_args_us']):.2f} | "
          f"{med(r['kjit block_copy_us']):.2f}")
PY
