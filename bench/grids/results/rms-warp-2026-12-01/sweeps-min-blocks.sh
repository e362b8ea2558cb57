#!/usr/bin/env bash
# Warp rows against block rows at narrow shapes: one kjit sweep per shape, every variant digest-checked.
set -u
K=${KJIT:-build-py/tools/kjit}
out=${OUT:-/tmp/out}/rows; mkdir -p "$out"
shapes=("bf16 8192 1024" "bf16 32768 1024" "bf16 2048 2048" "bf16 8192 2048" "f32 8192 1024" "f32 32768 1024"
        "f32 8192 2048" "f32 2048 1024")
[ -n "${SHAPES_FILE:-}" ] && mapfile -t shapes < "$SHAPES_FILE"
for spec in "${shapes[@]}"; do
  set -- $spec
  f=$out/$1-$2x$3.toml
  cat > "$f" <<T
kernel = "rms_norm"
dtype = "$1"
constraints = ["RMS_WIDTH % RMS_BLOCK == 0", "RMS_MIN_BLOCKS * RMS_BLOCK <= 2048"]
[shape]
rows = $2
n = $3
[defines]
RMS_WIDTH = 1024
[sweep]
RMS_WARP_ROWS = [0, 1]
RMS_BLOCK = [64, 128, 256]
RMS_CACHE = [2, 4, 8]
RMS_MIN_BLOCKS = [0, 8, 12, 16, 24, 32]
[check]
mode = "digest"
baseline = { RMS_WARP_ROWS = 0, RMS_BLOCK = 256, RMS_CACHE = 8, RMS_MIN_BLOCKS = 0 }
[bench]
warmup = 5
reps = 30
flush_l2 = true
T
  echo "== $spec"
  "$K" sweep "$f" --src .gl/exp/mb --out "$out/$1-$2x$3.out" > "$out/$1-$2x$3.txt" 2>&1; echo "rc $?"
  rm -rf "$out/$1-$2x$3.out" "$f"
  sed -n 5,9p "$out/$1-$2x$3.txt"; grep -m1 "MIN_BLOCKS=0 RMS_WARP_ROWS=1" "$out/$1-$2x$3.txt"; grep -m1 "MIN_BLOCKS=0 RMS_WARP_ROWS=0" "$out/$1-$2x$3.txt"
done
