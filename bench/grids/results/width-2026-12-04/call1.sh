#!/usr/bin/env bash
# call1: the GPU suite at main's tree, then rms_norm decode rows at a reduction width just wide
# enough for the row (RMS_WIDTH >= chunks: the same tree over the same non-zero partials, so
# the same bits as RMS_WIDTH 1024) against the table's define set (rms_ab.py).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call1.txt 2>&1; grep -E "tests passed" $OUT/ctest-call1.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call1.txt; grep "Total Test time" $OUT/ctest-call1.txt)
echo "ctest at $SECONDS s"
AB=bench/grids/results/latency-2026-12-03/rms_ab.py
T=kernel_src/tuned_h200.toml
S=kernel_src
timeout 120 python3 $AB $T bf16 1x1024,32x1024 table=$S \
  w128b128=$S@RMS_WIDTH=128,RMS_BLOCK=128,RMS_CACHE=1 w128b64=$S@RMS_WIDTH=128,RMS_BLOCK=64,RMS_CACHE=2 \
  w128b32=$S@RMS_WIDTH=128,RMS_BLOCK=32,RMS_CACHE=4 > $OUT/w-bf16-1024.txt 2>&1
echo "bf16 1024 at $SECONDS s"
timeout 100 python3 $AB $T bf16 1x2048,32x2048,1x4096,32x4096 table=$S \
  w256b256=$S@RMS_WIDTH=256,RMS_BLOCK=256,RMS_CACHE=1 w512b512=$S@RMS_WIDTH=512,RMS_BLOCK=512,RMS_CACHE=1 \
  w512b256=$S@RMS_WIDTH=512,RMS_BLOCK=256,RMS_CACHE=2 > $OUT/w-bf16-2048.txt 2>&1
echo "bf16 2048/4096 at $SECONDS s"
timeout 100 python3 $AB $T f32 1x1024,32x1024,1x2048,32x2048 table=$S \
  w256b256=$S@RMS_WIDTH=256,RMS_BLOCK=256,RMS_CACHE=1 w256b128=$S@RMS_WIDTH=256,RMS_BLOCK=128,RMS_CACHE=2 \
  w512b512=$S@RMS_WIDTH=512,RMS_BLOCK=512,RMS_CACHE=1 w512b256=$S@RMS_WIDTH=512,RMS_BLOCK=256,RMS_CACHE=2 > $OUT/w-f32.txt 2>&1
echo "f32 at $SECONDS s"
