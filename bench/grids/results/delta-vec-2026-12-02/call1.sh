#!/usr/bin/env bash
# call1: delta_rule vectorized (srcN) against the old kernel (srcO) and fla, 32 calls per graph.
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
V="32/4/0,32/8/0,8/8/0,32/4/1,32/8/1,32/8/2,32/8/4,64/8/4,16/8/4,32/16/4,64/16/4,32/4/1/1,32/8/1/1,32/8/2/1,32/8/4/1,16/8/4/1,64/16/4/1"
PYTHONPATH=build-py/python timeout 420 python3 .gl/exp/dr_ab.py .gl/exp/srcO .gl/exp/srcN 32x32x128,64x64x128,1x16x128,4x16x128,16x32x128 "$V" > $OUT/ab1.txt 2>&1
cat $OUT/ab1.txt | cut -c1-170
