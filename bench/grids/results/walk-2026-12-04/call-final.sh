#!/usr/bin/env bash
# conv1d bf16 without the activation at 64 registers (CONV_BF16_BOUNDS) against the kernel
# before it, the conv1d grid with the re-tuned table, and the GPU suite twice.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
timeout 100 python3 bench/grids/results/walk-2026-12-04/conv_arms.py \
  "bf16:1:4096:2048,bf16:1:8192:2048,bf16:1:1024:8192,bf16:4:1024:2048,bf16:4:4096:8192,bf16:32:4096:512" \
  "before=.gl/exp/cv_walk@table,bounds=kernel_src@table" none > $OUT/ab-none.txt 2>&1
cat $OUT/ab-none.txt | cut -c1-125
(cd bench && timeout -s INT 110 python3 peers_grid.py grids/conv1d.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/conv1d.csv > $OUT/grid-conv1d.txt 2>&1; grep summary $OUT/grid-conv1d.txt)
echo "grid at $SECONDS s"
for i in 1 2; do
  (cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$i.txt 2>&1; grep -E "tests passed" $OUT/ctest-$i.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-$i.txt; grep "Total Test time" $OUT/ctest-$i.txt)
done
echo "done at $SECONDS s"
