#!/usr/bin/env bash
# call2: where a decode row's time goes. A diagnostic kernel (.gl/exp/rms_min/rms_norm.cu, committed as rms_min.cu: one
# row per block, one 16-byte chunk per thread, kernel_src's tree for such a row) at RMS_MIN 0
# (rsqrtf, no NaN test), 3 (exact root, the NaN test: kernel_src's bits), 15 (also the
# alignment test with a fallback and a grid-stride loop), against the table's kernel and Liger.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
AB=bench/grids/results/latency-2026-12-03/rms_ab.py
T=kernel_src/tuned_h200.toml
S=kernel_src
M=.gl/exp/rms_min
run() { # dtype shapes block
  timeout 100 python3 $AB $T $1 $2 table=$S m0=$M@RMS_BLOCK=$3,RMS_MIN=0 m3=$M@RMS_BLOCK=$3,RMS_MIN=3 \
    m15=$M@RMS_BLOCK=$3,RMS_MIN=15 2>&1
}
{ run bf16 1x1024,32x1024 128; run f32 1x1024,32x1024 256; run bf16 1x4096 512; run f32 1x4096 1024; } > $OUT/min.txt
echo "done at $SECONDS s"
