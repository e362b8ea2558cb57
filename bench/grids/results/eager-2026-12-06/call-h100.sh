#!/usr/bin/env bash
# On an H100 (no H200 lent): the gpu suite twice at the tree's head, then the small bf16 tune into
# a scratch copy of the table, to see where the eager loads win on this card.
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench
K=build-py/tools/kjit D=bench/grids/results/eager-2026-12-06
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
for i in 1 2; do
  (cd build-py && timeout 170 ctest -L gpu -j 8 > $OUT/ctest-$i.txt 2>&1; echo "ctest $i rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-$i.txt)")
done
T=$OUT/scratch.toml; cp kernel_src/tuned.toml $T
timeout -s INT $((570 - SECONDS)) stdbuf -oL $K tune conv1d_cl --sweep bench/tune/conv1d_cl_small.sweep.toml \
  --dtype bf16 --shapes "$(cat $D/shapes-bf16-small.txt)" --table $T --src kernel_src > $OUT/tune-bf16-small-h100.txt 2>&1
echo "tune rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-bf16-small-h100.txt) recorded"
