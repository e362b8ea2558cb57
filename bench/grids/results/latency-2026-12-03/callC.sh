#!/usr/bin/env bash
# callC: rms_norm with the idle warps of a narrow compiled-in row leaving at once, against main's
# kernel (.gl/exp/rms_main) at the table's define sets for the four shapes that have such warps
# and at one without (its CUBIN is main's), and against Liger; then the six entries whose CUBIN
# changed re-tuned with their sweep, the GPU suite twice. One tar back.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
R=bench/grids/results/latency-2026-12-03
mkdir -p /tmp/o
timeout 150 python3 $R/rms_ab.py kernel_src/tuned_h200.toml bf16 1x1024,32x1024,1x2048,32x2048,1x4096 \
  main=.gl/exp/rms_main exit=kernel_src > /tmp/o/rms_ab.txt 2>&1; echo "rms_ab rc $? at $SECONDS s"
cat /tmp/o/rms_ab.txt
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t /usr/bin/time -f "tune $l %e s" $K tune "$@" --table kernel_src/tuned_h200.toml --src kernel_src > /tmp/o/tune-$l.txt 2>&1
  echo "$l rc $? at $SECONDS s: $(tail -n 1 /tmp/o/tune-$l.txt)"
  cp kernel_src/tuned_h200.toml /tmp/o/table-$l.toml
}
# The six entries whose CUBIN changed (the bf16 kernel of the fp32 ones shares their module).
tune rms-bf16 120 rms_norm --sweep bench/tune/rms_norm_decode_graph.sweep.toml --dtype bf16 --shapes 'rows=1,n=1024;rows=32,n=1024;rows=1,n=2048;rows=32,n=2048'
tune rms-f32 80 rms_norm --sweep bench/tune/rms_norm_decode_graph.sweep.toml --dtype f32 --shapes 'rows=1,n=1024;rows=32,n=1024'
for i in 1 2; do
  (cd build-py && timeout 150 ctest -L gpu -j 8 --output-on-failure > /tmp/o/ctest-$i.txt 2>&1; grep -E "tests passed" /tmp/o/ctest-$i.txt; grep -E "\(Failed\)|Timeout|Not Run" /tmp/o/ctest-$i.txt; grep "Total Test time" /tmp/o/ctest-$i.txt)
done
tar -C /tmp/o -czf $OUT/callC.tgz .
echo "done at $SECONDS s"
