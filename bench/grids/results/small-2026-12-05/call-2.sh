#!/usr/bin/env bash
# The gpu test suite once (-j 8), then the conv1d_cl bf16 tune of the 16 small grid points that
# miss, channels per thread an axis (bench/tune/conv1d_cl_small.sweep.toml, 80 variants, each
# checked by digest against the contract's defaults), in the time left. Set-up: build-py packed
# by `scripts/carry.sh build-py`, the peer wheels in .gl/whl; carry [".carry", ".gl/whl"].
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-j8.txt 2>&1
 echo "ctest rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-j8.txt)")
K=build-py/tools/kjit
T=kernel_src/tuned_h200.toml
timeout $((560 - SECONDS)) stdbuf -oL $K tune conv1d_cl --sweep bench/tune/conv1d_cl_small.sweep.toml --dtype bf16 \
    --shapes "$(cat bench/grids/results/wvec-2026-12-05/shapes-bf16-small-miss.txt)" --table $T --src kernel_src > $OUT/tune-small-bf16.txt 2>&1
echo "tune small rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-small-bf16.txt) recorded"
cp $T $OUT/tuned_h200.toml
