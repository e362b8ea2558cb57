#!/usr/bin/env bash
# call1: rms_norm with its rows staged through shared memory (RMS_STAGES) against the table's
# kernel (main's source, .gl/exp/rms_main) at large and mid-size rows, fp32 and bf16; Liger beside.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/stage-2026-12-03
A=256:2:2,256:2:4,256:3:2,256:3:4,512:2:2,512:2:4,512:3:2,512:3:4,1024:2:1,1024:2:2,1024:3:1,1024:3:2
mkdir -p /tmp/o
timeout 280 python3 $R/stage_ab.py kernel_src/tuned_h200.toml .gl/exp/rms_main f32 16384x4096,8192x7168,2048x16384,2048x4096,256x7168 $A > /tmp/o/stage-f32.txt 2>&1; echo "f32 rc $? at $SECONDS s"
timeout 280 python3 $R/stage_ab.py kernel_src/tuned_h200.toml .gl/exp/rms_main bf16 32768x8192,16384x7168,2048x1024,8192x1024,2048x4096 $A > /tmp/o/stage-bf16.txt 2>&1; echo "bf16 rc $? at $SECONDS s"
cp /tmp/o/*.txt $OUT/
echo "done at $SECONDS s"
