#!/usr/bin/env bash
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
(cd build-py && timeout 150 ctest -L gpu -R conv1d -j 4 --output-on-failure > $OUT/ctest-conv1d.txt 2>&1; echo "ctest rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-conv1d.txt)")
timeout $((330 - SECONDS)) python3 abtest/ab.py small > $OUT/ab-small.txt 2>&1; echo "ab small at $SECONDS s"
(cd bench && timeout -s INT 80 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype bf16 \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/grid-bf16.csv > $OUT/grid-bf16.txt 2>&1; echo "grid at $SECONDS s: $(grep summary $OUT/grid-bf16.txt)")
timeout $((560 - SECONDS)) python3 abtest/ab.py large > $OUT/ab-large.txt 2>&1; echo "ab large at $SECONDS s"
