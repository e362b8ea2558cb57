#!/usr/bin/env bash
# call3: the remaining re-tunes (delta_rule b=64 h=64 dk=128; conv1d fp32 long rows), then the
# delta_rule and conv1d grids with the new table, then the GPU suite twice.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python TORCHINDUCTOR_CACHE_DIR=/tmp/ind TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t /usr/bin/time -f "tune $l %e s" $K tune "$@" --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-$l.txt 2>&1
  echo "$l rc $? at $SECONDS s: $(tail -n 1 $OUT/tune-$l.txt)"
  cp kernel_src/tuned_h200.toml $OUT/table-$l.toml
}
tune dr-b64h64 100 delta_rule --sweep bench/tune/delta_rule.sweep.toml --shapes 'b=64,h=64,dk=128,dv=128'
tune conv-f32-large 200 conv1d --sweep kernel_src/conv1d.sweep.toml --dtype f32 \
  --shapes 'b=1,c=1024,t=2048;b=1,c=1024,t=8192;b=1,c=4096,t=2048;b=1,c=4096,t=8192;b=1,c=8192,t=2048;b=1,c=8192,t=8192;b=4,c=1024,t=2048;b=4,c=1024,t=8192'
(cd bench && timeout -s INT 70 python3 peers_grid.py grids/delta_rule.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/delta_rule.csv > $OUT/grid-delta_rule.txt 2>&1; grep summary $OUT/grid-delta_rule.txt)
(cd bench && timeout -s INT 70 python3 peers_grid.py grids/conv1d.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/conv1d.csv > $OUT/grid-conv1d.txt 2>&1; grep summary $OUT/grid-conv1d.txt)
echo "grids at $SECONDS s"
for i in 1 2; do
  (cd build-py && timeout 120 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$i.txt 2>&1; grep -E "tests passed" $OUT/ctest-$i.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-$i.txt; grep "Total Test time" $OUT/ctest-$i.txt)
done
echo "done at $SECONDS s"
timeout $((590 - SECONDS)) ncu --cache-control none --clock-control none -k regex:'rms' --section SpeedOfLight \
  --section LaunchStats --section Occupancy --section WarpStateStats --csv --page details \
  python3 bench/grids/results/retune-2026-12-03/rms_decode_blocks.py kernel_src > $OUT/ncu-rms-blocks.csv 2> $OUT/ncu-rms-blocks.err
echo "ncu rc $? at $SECONDS s"
