#!/usr/bin/env bash
# call5: the rms_norm grid (bench/grids/rms_norm.toml) in both dtypes with the table of call 4,
# then the GPU suite once.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
for d in f32 bf16; do
  (cd bench && timeout -s INT 130 python3 peers_grid.py grids/rms_norm.toml --dtype $d --src ../kernel_src \
     --table ../kernel_src/tuned_h200.toml --csv $OUT/rms_norm-$d.csv > $OUT/grid-rms-$d.txt 2>&1; grep summary $OUT/grid-rms-$d.txt)
  echo "rms grid $d at $SECONDS s"
done
(cd build-py && timeout 150 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call5.txt 2>&1; grep -E "tests passed" $OUT/ctest-call5.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call5.txt; grep "Total Test time" $OUT/ctest-call5.txt)
echo "done at $SECONDS s"
