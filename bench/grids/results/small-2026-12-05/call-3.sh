#!/usr/bin/env bash
# With the 16 small bf16 entries in the table: the conv1d_cl bf16 grid, then the 9 large bf16
# points left untuned (kernel_src/conv1d_cl.sweep.toml) in the time left.
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
T=kernel_src/tuned_h200.toml
(cd bench && timeout -s INT 120 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype bf16 \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/grid-bf16.csv > $OUT/grid-bf16.txt 2>&1; echo "grid at $SECONDS s: $(grep summary $OUT/grid-bf16.txt)")
timeout $((500 - SECONDS)) stdbuf -oL $K tune conv1d_cl --sweep kernel_src/conv1d_cl.sweep.toml --dtype bf16 \
    --shapes "$(cat bench/grids/results/wvec-2026-12-05/shapes-bf16-large9.txt)" --table $T --src kernel_src > $OUT/tune-large-bf16.txt 2>&1
echo "tune large rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-large-bf16.txt) recorded"
cp $T $OUT/tuned_h200.toml
