#!/usr/bin/env bash
# The end-to-end form three ways at the tuned define sets of rows of 64 steps, against
# causal-conv1d in one process (bias+silu, then none): a = as tuned in call-tune.sh, c = a with a
# channel's four taps loaded as one vector, d = c with the next segment's taps and bias loaded
# with its x (kernel_src during this call; not kept, bench/RESULTS.md describes it). Then the
# bit test of the end-to-end form on d.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
S="bf16:32:8192:64,bf16:32:1024:64,bf16:4:8192:64,bf16:1:4096:64,f32:32:8192:64,f32:32:4096:64,f32:32:1024:64"
A="a=.gl/exp/flat_a@table,c=.gl/exp/flat_c@table,d=kernel_src@table"
timeout 150 python3 bench/grids/results/walk-2026-12-04/conv_arms.py "$S" "$A" > $OUT/ab-flat.txt 2>&1
cut -c1-140 $OUT/ab-flat.txt
timeout 100 python3 bench/grids/results/walk-2026-12-04/conv_arms.py "$S" "$A" none > $OUT/ab-flat-none.txt 2>&1
cut -c1-140 $OUT/ab-flat-none.txt
echo "arms at $SECONDS s"
timeout 120 build-py/tests/test_kernels "--test-case=conv1d over the rows laid end to end*" > $OUT/bit-flat.txt 2>&1; echo "bit test rc $?"; tail -3 $OUT/bit-flat.txt
echo "done at $SECONDS s"
