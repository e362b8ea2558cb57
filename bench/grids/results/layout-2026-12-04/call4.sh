#!/usr/bin/env bash
# call4: bf16 rows of 7168 at 2048 - 32768 rows re-tuned with bench/tune/rms_norm_l2.sweep.toml
# (now with the 896-wide reduction and blocks of 224 and 448), those shapes against the peers
# with the new table (peers_grid.py on a grid of just them), then the GPU suite.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
for s in rows=2048,n=7168 rows=8192,n=7168 rows=16384,n=7168 rows=32768,n=7168; do
  t0=$SECONDS
  timeout 150 $K tune rms_norm --table kernel_src/tuned_h200.toml --sweep bench/tune/rms_norm_l2.sweep.toml --dtype bf16 --shapes "$s" 2>&1
  echo "== bf16 $s: rc $? in $((SECONDS - t0)) s"
done > $OUT/tune4.txt
echo "tuned at $SECONDS s"; grep "^==" $OUT/tune4.txt
cp kernel_src/tuned_h200.toml $OUT/
(cd bench && timeout 200 python3 peers_grid.py grids/results/layout-2026-12-04/rms7168.toml --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/grid7168.csv > $OUT/grid7168.txt 2>&1)
echo "grid rc $? at $SECONDS s"; tail -8 $OUT/grid7168.txt
cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest4.txt 2>&1
echo "ctest rc $? at $SECONDS s"; tail -4 $OUT/ctest4.txt
