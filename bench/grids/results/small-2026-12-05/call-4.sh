#!/usr/bin/env bash
# With the 6 large bf16 entries of call 3 too: the conv1d_cl bf16 grid, then the 3 largest bf16
# points still untuned, in the time left.
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
T=kernel_src/tuned_h200.toml
(cd bench && timeout -s INT 60 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype bf16 \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/grid-bf16.csv > $OUT/grid-bf16.txt 2>&1; echo "grid at $SECONDS s: $(grep summary $OUT/grid-bf16.txt)")
timeout $((300 - SECONDS)) stdbuf -oL $K tune conv1d_cl --sweep kernel_src/conv1d_cl.sweep.toml --dtype bf16 \
    --shapes "b=32,c=8192,t=2048;b=32,c=4096,t=8192;b=32,c=8192,t=8192" --table $T --src kernel_src > $OUT/tune-large3-bf16.txt 2>&1
echo "tune rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-large3-bf16.txt) recorded"
cp $T $OUT/tuned_h200.toml
