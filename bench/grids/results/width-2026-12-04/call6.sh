#!/usr/bin/env bash
# call6: kernel_src with the compiled-in width's static chunk tests (.gl/exp/rms_has) against
# main's source (.gl/exp/rms_main), at the table's define set and at a reduction just as wide as
# the row (same bits: RMS_WIDTH >= chunks) with one chunk per thread.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/width-2026-12-04
T=kernel_src/tuned_h200.toml
O=.gl/exp/rms_main
H=.gl/exp/rms_has
run() { # dtype shapes narrow-defines
  timeout 120 python3 bench/grids/results/latency-2026-12-03/rms_ab.py $T $1 $2 main=$O has=$H main_w=$O@$3 has_w=$H@$3 2>&1
}
{ run bf16 1x1024,32x1024 RMS_WIDTH=128,RMS_BLOCK=128,RMS_CACHE=1
  run f32 1x1024,32x1024 RMS_WIDTH=256,RMS_BLOCK=256,RMS_CACHE=1
  run bf16 1x2048,1x4096 RMS_WIDTH=512,RMS_BLOCK=512,RMS_CACHE=1; } > $OUT/has.txt
echo "ab at $SECONDS s"
