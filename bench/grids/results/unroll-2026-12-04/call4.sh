#!/usr/bin/env bash
# call4: the rest of the large rows tuned with bench/tune/rms_norm_l2.sweep.toml (fp32 32768 x
# 16384, rows of 2048 at n >= 7168), then the rms_norm grid against the peers in both dtypes
# with the new table, then the GPU suite.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
tune() { # dtype shape...
  local d=$1; shift
  for s in "$@"; do
    local t0=$SECONDS
    timeout 60 $K tune rms_norm --table kernel_src/tuned_h200.toml --sweep bench/tune/rms_norm_l2.sweep.toml --dtype $d --shapes "$s" 2>&1
    echo "== $d $s: rc $? in $((SECONDS - t0)) s"
  done
}
{ tune f32 rows=32768,n=16384 rows=2048,n=7168 rows=2048,n=8192 rows=2048,n=16384
  tune bf16 rows=2048,n=7168 rows=2048,n=8192; } > $OUT/tune4.txt
echo "tuned at $SECONDS s"; grep "^==" $OUT/tune4.txt
cp kernel_src/tuned_h200.toml $OUT/
cd bench
for d in f32 bf16; do
  timeout 170 python3 peers_grid.py grids/rms_norm.toml --dtype $d --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/grid-$d.csv > $OUT/grid-$d.txt 2>&1
  echo "grid $d rc $? at $SECONDS s"; tail -4 $OUT/grid-$d.txt
done
cd ../build-py && timeout 120 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call4.txt 2>&1; grep -E "tests passed" $OUT/ctest-call4.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call4.txt
echo "ctest at $SECONDS s"
