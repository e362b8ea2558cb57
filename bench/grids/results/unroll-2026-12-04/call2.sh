#!/usr/bin/env bash
# call2: an uncached row read as Triton's looped reduction reads it (RMS_UNROLL loads of a group
# in flight, the second read from L2 with eviction hints: RMS_HINT), .gl/exp/unroll, against the
# table's kernel and torch.compile at the large rows the grid misses.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
S=bench/grids/results/unroll-2026-12-04/big_ab.py
E=.gl/exp/unroll
arms=""
for cfg in "512 8 1" "512 8 0" "512 4 1" "256 8 1" "1024 4 1" "512 2 1"; do
  set -- $cfg
  arms="$arms B$1U$2H$3=$E@RMS_BLOCK=$1,RMS_CACHE=1,RMS_W_EARLY=0,RMS_N=0,RMS_WARP_ROWS=0,RMS_UNROLL=$2,RMS_HINT=$3"
done
timeout 280 python3 $S kernel_src/tuned_h200.toml f32 16384x4096,32768x7168,8192x8192,32768x16384,16384x2048 .gl/exp/main $arms > $OUT/big2-f32.txt 2>&1
echo "f32 rc $? at $SECONDS s"
timeout 250 python3 $S kernel_src/tuned_h200.toml bf16 16384x7168,32768x8192,16384x1024,8192x4096 .gl/exp/main $arms > $OUT/big2-bf16.txt 2>&1
echo "bf16 rc $? at $SECONDS s"
