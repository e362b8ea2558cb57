#!/usr/bin/env bash
# call3: the 5 bf16 wide entries call2's tune did not reach (one invocation per shape), then the
# GPU suite, then the rms_norm grid against the peers in both dtypes with the re-tuned table.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
for s in 'rows=32768,n=8192' 'rows=2048,n=16384' 'rows=8192,n=16384' 'rows=16384,n=16384' 'rows=32768,n=16384'; do
  t0=$SECONDS
  timeout 100 $K tune rms_norm --table kernel_src/tuned_h200.toml --sweep bench/tune/rms_norm_wide.sweep.toml --dtype bf16 --shapes "$s" 2>&1
  echo "== $s: rc $? in $((SECONDS - t0)) s"
done > $OUT/tune3.txt
cp kernel_src/tuned_h200.toml $OUT/
echo "tune at $SECONDS s"; grep "^==" $OUT/tune3.txt
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call3.txt 2>&1; grep -E "tests passed" $OUT/ctest-call3.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call3.txt)
echo "ctest at $SECONDS s"
cd bench
for d in bf16 f32; do
  timeout 150 python3 peers_grid.py grids/rms_norm.toml --dtype $d --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/grid-$d.csv > $OUT/grid-$d.txt 2>&1
  echo "grid $d rc $? at $SECONDS s"; tail -4 $OUT/grid-$d.txt
done
