#!/usr/bin/env bash
# call6: the 12 entries at 256 rows, the table before call 5's tune (.gl/exp/tuned_before256.toml,
# kernel_src/tuned_h200.toml at 1455440) against the new one in A B B A pairs (rms_ab.py, arm
# TABLE=); then the whole rms_norm grid with the final table, then the GPU suite.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
T=kernel_src/tuned_h200.toml
AB="python3 bench/grids/results/latency-2026-12-03/rms_ab.py"
for d in f32 bf16; do
  timeout 60 $AB $T $d 256x1024,256x2048,256x4096,256x7168,256x8192,256x16384 \
    new=kernel_src old=kernel_src@TABLE=.gl/exp/tuned_before256.toml > $OUT/ab256-$d.txt 2>&1
  echo "ab $d rc $? at $SECONDS s"
done
cd bench
for d in f32 bf16; do
  timeout 165 python3 peers_grid.py grids/rms_norm.toml --dtype $d --src ../kernel_src --table ../$T --csv $OUT/grid-$d.csv > $OUT/grid-$d.txt 2>&1
  echo "grid $d rc $? at $SECONDS s"; tail -2 $OUT/grid-$d.txt | cut -c1-200
done
cd ../build-py && timeout 150 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest6.txt 2>&1
echo "ctest rc $? at $SECONDS s"; grep -E "tests passed|Failed|Timeout" $OUT/ctest6.txt
