#!/usr/bin/env bash
# callA: delta_rule with every global load issued before the first use (the gate's exponential
# after them, the key/query share in registers with a constant trip count, the value columns
# before the barriers): A/B against main's kernel at the table's define sets (same bits
# required), then the 31 entries re-tuned, the grid against fla, and the GPU suite. One tar back.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
R=bench/grids/results/latency-2026-12-03
mkdir -p /tmp/o
(cd bench && timeout 150 python3 grids/results/retune-2026-12-03/dr_ab.py ../kernel_src/tuned_h200.toml \
   main=../.gl/exp/dr_old loads=../kernel_src > /tmp/o/dr_ab.txt 2>&1; echo "dr_ab rc $? at $SECONDS s")
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t /usr/bin/time -f "tune $l %e s" $K tune "$@" --table kernel_src/tuned_h200.toml --src kernel_src > /tmp/o/tune-$l.txt 2>&1
  echo "$l rc $? at $SECONDS s: $(tail -n 1 /tmp/o/tune-$l.txt)"
  cp kernel_src/tuned_h200.toml /tmp/o/table-$l.toml
}
D128='b=1,h=16,dk=128,dv=128;b=1,h=32,dk=128,dv=128;b=1,h=64,dk=128,dv=128;b=4,h=16,dk=128,dv=128;b=4,h=32,dk=128,dv=128;b=4,h=64,dk=128,dv=128;b=8,h=16,dk=128,dv=128;b=16,h=16,dk=128,dv=128;b=16,h=32,dk=128,dv=128;b=16,h=64,dk=128,dv=128;b=32,h=16,dk=128,dv=128;b=32,h=32,dk=128,dv=128;b=32,h=64,dk=128,dv=128;b=64,h=16,dk=128,dv=128;b=64,h=32,dk=128,dv=128;b=64,h=64,dk=128,dv=128'
D64=$(echo "$D128" | sed 's/dk=128,dv=128/dk=64,dv=64/g; s/b=8,h=16,dk=64,dv=64;//')
tune dr64 110 delta_rule --sweep bench/tune/delta_rule_dk64.sweep.toml --shapes "$D64"
tune dr128 210 delta_rule --sweep bench/tune/delta_rule.sweep.toml --shapes "$D128"
(cd bench && timeout -s INT 70 python3 peers_grid.py grids/delta_rule.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv /tmp/o/delta_rule.csv > /tmp/o/grid-delta_rule.txt 2>&1; grep summary /tmp/o/grid-delta_rule.txt)
echo "grid at $SECONDS s"
(cd build-py && timeout $((585 - SECONDS)) ctest -L gpu -j 8 --output-on-failure > /tmp/o/ctest-1.txt 2>&1; grep -E "tests passed" /tmp/o/ctest-1.txt; grep -E "\(Failed\)|Timeout|Not Run" /tmp/o/ctest-1.txt; grep "Total Test time" /tmp/o/ctest-1.txt)
tar -C /tmp/o -czf $OUT/callA.tgz .
echo "done at $SECONDS s"
