#!/usr/bin/env bash
# The rest of call-tune.sh's shapes (cut short by its time limit) and b=8 c=4096 t=1300, with the
# shipped sweep (the end-to-end form only where rows are whole chunks and no whole number of
# segments); then the conv1d grid with the new table (b = 32 at t = 8192 through the new
# nearest-batch bucket) and the GPU suite.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
SB=$(command -v stdbuf > /dev/null && echo "stdbuf -oL") # whole lines in the log if a tune is cut short
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t /usr/bin/time -f "tune $l %e s" $SB $K tune "$@" --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-$l.txt 2>&1
  echo "$l rc $? at $SECONDS s: $(tail -n 1 $OUT/tune-$l.txt)"
  cp kernel_src/tuned_h200.toml $OUT/table.toml
}
tune conv-f32 250 conv1d --sweep kernel_src/conv1d.sweep.toml --dtype f32 \
  --shapes "b=1,c=1024,t=64;b=1,c=4096,t=64;b=1,c=8192,t=64;b=4,c=1024,t=64;b=4,c=4096,t=64;b=4,c=8192,t=64;b=8,c=4096,t=1300;b=32,c=8192,t=512;b=32,c=1024,t=2048;b=32,c=4096,t=2048;b=32,c=8192,t=2048"
tune conv-bf16 $((340 - SECONDS)) conv1d --sweep kernel_src/conv1d.sweep.toml --dtype bf16 \
  --shapes "b=8,c=4096,t=1300;b=32,c=4096,t=2048;b=32,c=8192,t=2048"
(cd bench && timeout -s INT $((470 - SECONDS)) python3 peers_grid.py grids/conv1d.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/conv1d.csv > $OUT/grid-conv1d.txt 2>&1; grep summary $OUT/grid-conv1d.txt)
echo "grid at $SECONDS s"
(cd build-py && timeout $((590 - SECONDS)) ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-2.txt 2>&1; grep -E "tests passed" $OUT/ctest-2.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-2.txt; grep "Total Test time" $OUT/ctest-2.txt)
echo "done at $SECONDS s"
