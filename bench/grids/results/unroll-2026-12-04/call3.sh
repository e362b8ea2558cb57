#!/usr/bin/env bash
# call3: kjit tune with bench/tune/rms_norm_l2.sweep.toml at the large rows the grid misses (one
# invocation per shape: a timeout loses only that shape), the table copied out, then the GPU suite.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
tune() { # dtype shape...
  local d=$1; shift
  for s in "$@"; do
    local t0=$SECONDS
    timeout 90 $K tune rms_norm --table kernel_src/tuned_h200.toml --sweep bench/tune/rms_norm_l2.sweep.toml --dtype $d --shapes "$s" 2>&1
    echo "== $d $s: rc $? in $((SECONDS - t0)) s"
  done
}
tune bf16 rows=16384,n=4096 rows=32768,n=4096 rows=8192,n=7168 rows=16384,n=7168 rows=32768,n=7168 rows=8192,n=8192 rows=16384,n=8192 rows=32768,n=8192 > $OUT/tune-bf16.txt
echo "bf16 tuned at $SECONDS s"; grep "^==" $OUT/tune-bf16.txt
tune f32 rows=16384,n=4096 rows=32768,n=4096 rows=8192,n=7168 rows=16384,n=7168 rows=32768,n=7168 rows=8192,n=8192 rows=16384,n=8192 rows=32768,n=8192 rows=8192,n=16384 rows=16384,n=16384 > $OUT/tune-f32.txt
echo "f32 tuned at $SECONDS s"; grep "^==" $OUT/tune-f32.txt
cp kernel_src/tuned_h200.toml $OUT/
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call3.txt 2>&1; grep -E "tests passed" $OUT/ctest-call3.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call3.txt)
echo "ctest at $SECONDS s"
