#!/usr/bin/env bash
# call5: the diagnostic kernel (rms_min.cu, = .gl/exp/rms_min/rms_norm.cu) without its row loop
# (RMS_MIN bit 4), with the division by the constant RMS_N (bit 5) and without the thread's
# chunk test (bit 6): 112 = all three with rsqrtf, 113 with the exact root, 96 the loop kept,
# 64 the chunk test alone; against the table's kernel and Liger (rms_ab.py). Then min_bits.py.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/width-2026-12-04
T=kernel_src/tuned_h200.toml
M=.gl/exp/rms_min
run() { # dtype shapes block
  timeout 120 python3 bench/grids/results/latency-2026-12-03/rms_ab.py $T $1 $2 table=kernel_src m0=$M@RMS_BLOCK=$3,RMS_MIN=0 \
    m64=$M@RMS_BLOCK=$3,RMS_MIN=64 m96=$M@RMS_BLOCK=$3,RMS_MIN=96 m112=$M@RMS_BLOCK=$3,RMS_MIN=112 \
    m113=$M@RMS_BLOCK=$3,RMS_MIN=113 m3=$M@RMS_BLOCK=$3,RMS_MIN=3 2>&1
}
{ run bf16 1x1024,32x1024 128; run f32 1x1024,32x1024 256; run bf16 1x2048 256; run bf16 1x4096 512; } > $OUT/min2.txt
echo "ab at $SECONDS s"
timeout 60 python3 $R/min_bits.py > $OUT/min_bits.txt 2>&1
echo "bits at $SECONDS s"
