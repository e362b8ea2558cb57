#!/usr/bin/env bash
# call2: `lean` (RMS_LEAN=1 with RMS_N = the row width: only the compiled-in width's 16-byte
# path, a trap for any other launch; 2 - 6x less code) against main's source at the table's
# define set, at 32, 256 and 2048 rows (rms_ab.py, A B B A pairs, 1 and 32 calls per graph).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
T=kernel_src/tuned_h200.toml
AB=bench/grids/results/latency-2026-12-03/rms_ab.py
E=.gl/exp
timeout 250 python3 $AB $T bf16 256x1024,256x2048,256x4096,256x7168,256x8192,256x16384,2048x1024,2048x4096,2048x7168,32x4096,32x8192 \
  main=$E/main lean=$E/lean@RMS_LEAN=1,RMS_N=n > $OUT/lean-bf16.txt 2>&1
echo "bf16 at $SECONDS s"
timeout 220 python3 $AB $T f32 256x1024,256x2048,256x4096,256x7168,256x8192,2048x1024,2048x2048,2048x7168,32x2048 \
  main=$E/main lean=$E/lean@RMS_LEAN=1,RMS_N=n > $OUT/lean-f32.txt 2>&1
echo "f32 at $SECONDS s"
