#!/usr/bin/env bash
# conv1d_cl re-tuned with the eager first-tile loads (CONV_CL_EAGER) as a sweep axis: the small
# shapes (bench/tune/conv1d_cl_small.sweep.toml, bf16 then f32), then the large bf16 ones
# (conv1d_cl_large.sweep.toml), each under a deadline so that what finished is kept. On a card
# other than an H200 the tunes go to a scratch copy of the table (the figures still say whether
# eager wins there). The gpu suite runs first, once (call 2 runs it again).
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench
K=build-py/tools/kjit T=kernel_src/tuned.toml D=bench/grids/results/eager-2026-12-06
gpu=$(nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader); echo "$gpu" > $OUT/gpu.txt
case "$gpu" in *H200*) ;; *) cp $T $OUT/scratch.toml; T=$OUT/scratch.toml ;; esac
(cd build-py && timeout 150 ctest -L gpu -j 8 > $OUT/ctest-1.txt 2>&1; echo "ctest rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-1.txt)")
. $D/tune.sh
tune bf16-small small bf16 370
tune f32-small small f32 440
tune bf16-large large bf16 580
