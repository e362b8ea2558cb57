#!/usr/bin/env bash
# On an H100, with the eager loads the default (CONV_CL_EAGER=1, 112cf3f): the gpu suite, the
# channel-last grids against causal-conv1d with kernel_src/tuned.toml (f32 first: most of its
# shapes run the contract's defaults there), then the gpu suite again; END (default 560) is the
# last second, what finished by then is kept.
END=${END:-560}
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
(cd build-py && timeout 150 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-1.txt 2>&1; echo "ctest 1 rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-1.txt)")
for dt in f32 bf16; do
  left=$((END - 60 - SECONDS)); [ $left -gt 30 ] || break
  (cd bench && timeout -s INT $((left < 150 ? left : 150)) python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype $dt \
     --table ../kernel_src/tuned.toml --csv $OUT/grid-$dt.csv > $OUT/grid-$dt.txt 2>&1)
  echo "grid $dt at $SECONDS s: $(grep summary $OUT/grid-$dt.txt)"
done
(cd build-py && timeout $((END - SECONDS)) ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-2.txt 2>&1; echo "ctest 2 rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-2.txt)")
