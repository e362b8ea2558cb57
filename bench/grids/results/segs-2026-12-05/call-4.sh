#!/usr/bin/env bash
# conv1d_cl: tune the grid points the L16 S1 defaults miss (bf16: 21, f32: 5; small first) into
# the table, then the grid against causal-conv1d with that table, then the GPU suite.
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
for d in bf16 f32; do
  lim=$([ $d = bf16 ] && echo 190 || echo $((245 - SECONDS)))
  timeout $lim stdbuf -oL build-py/tools/kjit tune conv1d_cl --sweep kernel_src/conv1d_cl.sweep.toml --dtype $d \
    --shapes "$(cat .gl/exp/shapes-$d.txt)" --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-grid-$d.txt 2>&1
  echo "tune $d rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-grid-$d.txt) recorded"
  cp kernel_src/tuned_h200.toml $OUT/
done
(cd bench && timeout -s INT 60 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/grid.csv > $OUT/grid.txt 2>&1; echo "grid at $SECONDS s: $(grep summary $OUT/grid.txt)")
(cd build-py && timeout $((450 - SECONDS)) ctest -L gpu -j 8 --output-on-failure > $OUT/ctest.txt 2>&1; echo "ctest rc $? at $SECONDS s"; grep -E "tests passed|Failed|Timeout" $OUT/ctest.txt)
