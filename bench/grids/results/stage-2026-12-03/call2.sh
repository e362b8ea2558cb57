#!/usr/bin/env bash
# call2: the GPU suite twice (with the shared-memory opt-in fix and its test), then rms_norm's
# cached-row loads and stores with cache hints (.gl/exp/rms_hint, RMS_HINT bits: 1 x loads
# L1::no_allocate + L2::256B prefetch, 2 y stores evict-first, 4 x loads evict-first) against
# main's kernel at the table's define sets (rms_ab.py, 1 and 32 calls per graph), Liger beside.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
mkdir -p /tmp/o
for i in 1 2; do
  (cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > /tmp/o/ctest-$i.txt 2>&1; grep -E "tests passed" /tmp/o/ctest-$i.txt; grep -E "\(Failed\)|Timeout|Not Run" /tmp/o/ctest-$i.txt; grep "Total Test time" /tmp/o/ctest-$i.txt)
done
AB=bench/grids/results/latency-2026-12-03/rms_ab.py
H=.gl/exp/rms_hint
ARMS="main=.gl/exp/rms_main h1=$H@RMS_HINT=1 h2=$H@RMS_HINT=2 h4=$H@RMS_HINT=4 h3=$H@RMS_HINT=3 h6=$H@RMS_HINT=6"
timeout 200 python3 $AB kernel_src/tuned_h200.toml f32 16384x4096,8192x7168,32768x8192,2048x4096,256x1024 $ARMS > /tmp/o/hint-f32.txt 2>&1; echo "f32 rc $? at $SECONDS s"
timeout 200 python3 $AB kernel_src/tuned_h200.toml bf16 32768x8192,16384x7168,8192x2048,2048x1024 $ARMS > /tmp/o/hint-bf16.txt 2>&1; echo "bf16 rc $? at $SECONDS s"
cp /tmp/o/*.txt $OUT/
echo "done at $SECONDS s"
