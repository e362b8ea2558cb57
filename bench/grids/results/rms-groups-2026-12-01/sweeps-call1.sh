#!/usr/bin/env bash
# Rows per warp (RMS_WARP_ROWS 0/1/2/4) x streaming hints: one kjit sweep per shape, every variant digest-checked.
set -u
K=${KJIT:-build-py/tools/kjit}
out=${OUT:-/tmp/out}; mkdir -p /tmp/g
shapes=("bf16 8192 1024" "bf16 32768 1024" "bf16 2048 1024" "bf16 256 1024" "bf16 8192 2048" "bf16 32768 2048"
        "bf16 16384 4096" "f32 32768 1024" "f32 8192 2048")
[ -n "${SHAPES_FILE:-}" ] && mapfile -t shapes < "$SHAPES_FILE"
for spec in "${shapes[@]}"; do
  set -- $spec
  f=/tmp/g/$1-$2x$3.toml
  cat > "$f" <<T
kernel = "rms_norm"
dtype = "$1"
constraints = ["RMS_WIDTH % RMS_BLOCK == 0"]
[shape]
rows = $2
n = $3
[defines]
RMS_WIDTH = 1024
[sweep]
RMS_WARP_ROWS = [0, 1, 2, 4]
RMS_STREAM = [0, 1]
RMS_BLOCK = { pow2 = [64, 1024] }
RMS_CACHE = [1, 2, 4, 8, 16]
[check]
mode = "digest"
baseline = { RMS_WARP_ROWS = 0, RMS_BLOCK = 256, RMS_CACHE = 8, RMS_STREAM = 0 }
[bench]
warmup = 5
reps = 30
flush_l2 = true
T
  echo "== $spec" >> $out/groups.txt
  "$K" sweep "$f" --src kernel_src --out "/tmp/g/$1-$2x$3.out" > "/tmp/g/$1-$2x$3.txt" 2>&1; echo "rc $?" >> $out/groups.txt
  head -30 "/tmp/g/$1-$2x$3.txt" >> $out/groups.txt
  for w in 0 1 2 4; do for s in 0 1; do grep -m1 "RMS_STREAM=$s RMS_WARP_ROWS=$w\b" "/tmp/g/$1-$2x$3.txt" >> $out/groups.txt; done; done
  grep -c IDENTICAL "/tmp/g/$1-$2x$3.txt" >> $out/groups.txt
  grep -v IDENTICAL "/tmp/g/$1-$2x$3.txt" | grep -E "DIFF|MISMATCH|differ" | head -5 >> $out/groups.txt
done
tar -C /tmp/g -czf $out/sweeps.tgz --exclude='*.out' .
