#!/usr/bin/env bash
# call5: fp32 32768 x 16384 (call4's tune ran out of its minute) and the fp32 rows of 2048
# elements at 16384 and 32768 rows tuned with bench/tune/rms_norm_l2.sweep.toml, then those
# shapes' table kernel against torch.compile (big_ab.py with no arms).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
for s in rows=32768,n=16384 rows=16384,n=2048 rows=32768,n=2048; do
  t0=$SECONDS
  timeout 150 $K tune rms_norm --table kernel_src/tuned_h200.toml --sweep bench/tune/rms_norm_l2.sweep.toml --dtype f32 --shapes "$s" 2>&1
  echo "== f32 $s: rc $? in $((SECONDS - t0)) s"
done > $OUT/tune5.txt
echo "tuned at $SECONDS s"; grep "^==" $OUT/tune5.txt
cp kernel_src/tuned_h200.toml $OUT/
timeout 90 python3 bench/grids/results/unroll-2026-12-04/big_ab.py kernel_src/tuned_h200.toml f32 32768x16384,16384x2048,32768x2048 kernel_src > $OUT/peer5.txt 2>&1
echo "ab rc $? at $SECONDS s"; cat $OUT/peer5.txt
