#!/usr/bin/env bash
# call1: the two-pass row read in unrolled groups (RMS_UNROLL, .gl/exp/unroll) at small caches
# against the table's kernel and torch.compile (this run crashed: big_ab.py dropped each arm's
# output while its graph lived on; fixed before call2).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
S=bench/grids/results/unroll-2026-12-04/big_ab.py
E=.gl/exp/unroll
arms="aa=$E"
for b in 256 512 1024; do for u in 1 2; do arms="$arms B${b}U$u=$E@RMS_BLOCK=$b,RMS_CACHE=1,RMS_W_EARLY=0,RMS_UNROLL=$u"; done; done
timeout 280 python3 $S kernel_src/tuned_h200.toml f32 16384x4096,32768x7168,8192x8192,32768x16384,16384x2048 .gl/exp/main $arms > $OUT/big-f32.txt 2>&1
echo "f32 rc $? at $SECONDS s"
timeout 250 python3 $S kernel_src/tuned_h200.toml bf16 16384x7168,32768x8192,16384x1024,8192x4096 .gl/exp/main $arms > $OUT/big-bf16.txt 2>&1
echo "bf16 rc $? at $SECONDS s"
