#!/usr/bin/env bash
# On the GPU machine (after scripts/on_device.sh): kjit check, the kernel sweeps, the
# 48-variant warm re-run, kjit bench of each kernel, the peers (torch, fla) in the same call,
# and the digest baselines. Logs go to $OUT (default /tmp/kjit-out).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/kjit-out}
mkdir -p "$out/sweeps"
k=build/tools/kjit
export KJIT_CACHE_DIR=${KJIT_CACHE_DIR:-/tmp/kjit-cache}
{
  $k check
  for f in kernel_src/*.sweep.toml; do $k sweep "$f" --out "$out/sweeps/$(basename "$f" .sweep.toml)"; done
  s=$(date +%s%N); $k sweep bench/sweep48.toml --out "$out/sweeps/sweep48" | tail -1; m=$(date +%s%N)
  $k sweep bench/sweep48.toml --out "$out/sweeps/sweep48" | tail -1; e=$(date +%s%N)
  echo "sweep48: first run $(( (m - s) / 1000000 )) ms, warm re-run $(( (e - m) / 1000000 )) ms"
} 2>&1 | tee "$out/check_sweeps.log"
{
  $k bench rms_norm --shape rows=8192,n=7168 -D RMS_BLOCK=256
  $k bench rms_norm --shape rows=8192,n=7168 --dtype bf16 -D RMS_BLOCK=256
  $k bench rms_norm --shape rows=1,n=7168 -D RMS_BLOCK=1024 --graph
  $k bench conv1d
  $k bench conv1d --dtype bf16
  $k bench delta_rule --graph
  $k bench delta_rule --graph -D DR_BV=16
  python3 bench/peers_kernels.py
} 2>&1 | tee "$out/bench_kernels.log"
{
  $k digest record conv1d && $k digest record conv1d --dtype bf16 && $k digest record delta_rule
  $k digest check rms_norm && $k digest check rms_norm -D RMS_BLOCK=1024
  $k digest check rms_norm -D RMS_WIDTH=512
  $k digest check delta_rule -D DR_BV=16 && $k digest check delta_rule -D DR_BV=64
  $k digest check conv1d -D CONV_TILE=32
  cp bench/baselines/*.toml "$out/sweeps/"
} 2>&1 | tee "$out/digests.log"
(cd "$out" && tar czf sweeps.tgz sweeps && rm -rf sweeps)
