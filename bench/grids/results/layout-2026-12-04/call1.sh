#!/usr/bin/env bash
# call1: rms_norm at decode rows, main's source against two layouts of the one-row form, at the
# table's define set: `call` (the general path out of line, so the one-row form's code follows
# the dispatch at the top of the function) and `slim` (RMS_SLIM=1: the one-row form alone, a
# trap where its conditions fail). rms_ab.py: A B B A pairs, 1 and 32 calls per graph.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
T=kernel_src/tuned_h200.toml
AB=bench/grids/results/latency-2026-12-03/rms_ab.py
E=.gl/exp
timeout 260 python3 $AB $T bf16 1x1024,32x1024,1x2048,1x4096,32x4096,1x7168,1x8192,32x8192 \
  main=$E/main call=$E/call slim=$E/slim@RMS_SLIM=1 > $OUT/layout-bf16.txt 2>&1
echo "bf16 at $SECONDS s"
timeout 200 python3 $AB $T f32 1x1024,32x2048,1x4096,1x7168,1x16384,32x16384 \
  main=$E/main call=$E/call slim=$E/slim@RMS_SLIM=1 > $OUT/layout-f32.txt 2>&1
echo "f32 at $SECONDS s"
