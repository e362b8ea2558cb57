#!/usr/bin/env bash
# call4: rms_norm's 16-byte loads of x and w through plain ld.global (RMS_LOAD=1: LDG.E.128, as
# Triton's kernels load) or .cg (2) or .cs (3) against the read-only path that `const
# __restrict__` gives (RMS_LOAD=0, LDG.E.128.CONSTANT, main's CUBIN), at the table's define
# sets; .gl/exp/rms_load is kernel_src with the RMS_LOAD switch.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
AB=bench/grids/results/latency-2026-12-03/rms_ab.py
T=kernel_src/tuned_h200.toml
L=.gl/exp/rms_load
run() { timeout 150 python3 $AB $T $1 $2 nc=$L ld=$L@RMS_LOAD=1 cg=$L@RMS_LOAD=2 cs=$L@RMS_LOAD=3 2>&1; }
run bf16 1x1024,32x1024,1x4096,32x4096,1x16384 > $OUT/load-bf16-decode.txt; echo "bf16 decode at $SECONDS s"
run f32 1x1024,32x1024,1x4096,1x7168,32x16384 > $OUT/load-f32-decode.txt; echo "f32 decode at $SECONDS s"
run bf16 256x4096,2048x4096,16384x4096,2048x1024 > $OUT/load-bf16-large.txt; echo "bf16 large at $SECONDS s"
run f32 256x7168,2048x4096,16384x4096,8192x7168 > $OUT/load-f32-large.txt; echo "f32 large at $SECONDS s"
