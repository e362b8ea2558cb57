#!/usr/bin/env bash
# call7: RMS_ONE_ROW (a decode row as straight-line code) in kernel_src: the GPU suite (the
# rms_norm bit test has its cases), then at decode rows the table's define set against the
# same block and cache with and without RMS_ONE_ROW (a block form whose row is whole chunks
# per thread: B = chunks / C), then the GPU suite again.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/width-2026-12-04
T=kernel_src/tuned_h200.toml
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call7-1.txt 2>&1; grep -E "tests passed" $OUT/ctest-call7-1.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call7-1.txt)
echo "ctest 1 at $SECONDS s"
run() { # dtype shapes block cache n
  timeout 60 python3 bench/grids/results/latency-2026-12-03/rms_ab.py $T $1 $2 table=kernel_src \
    fit=kernel_src@RMS_BLOCK=$3,RMS_CACHE=$4,RMS_W_EARLY=1,RMS_N=$5 \
    one=kernel_src@RMS_BLOCK=$3,RMS_CACHE=$4,RMS_W_EARLY=1,RMS_N=$5,RMS_ONE_ROW=1 2>&1
}
{ run bf16 1x1024,32x1024 128 1 1024; run bf16 1x2048,32x2048 256 1 2048
  run bf16 1x4096,32x4096 512 1 4096; run bf16 1x7168 128 7 7168; run bf16 1x16384 1024 2 16384
  run f32 1x1024,32x1024 256 1 1024; run f32 1x4096,32x4096 1024 1 4096; run f32 1x8192 512 4 8192
} > $OUT/one.txt
echo "ab at $SECONDS s"
(cd build-py && timeout 100 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call7-2.txt 2>&1; grep -E "tests passed" $OUT/ctest-call7-2.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call7-2.txt)
echo "ctest 2 at $SECONDS s"
