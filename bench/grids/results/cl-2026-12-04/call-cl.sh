#!/usr/bin/env bash
# conv1d channel-last (conv1d_cl): the GPU suite with its bit test against the row kernel, the
# contract's sweep at four shapes per dtype into the table, then the channel-last grid against
# causal-conv1d's channel-last path (with and without initial / final states).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
SB=$(command -v stdbuf > /dev/null && echo "stdbuf -oL")
(cd build-py && timeout 190 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-1.txt 2>&1; grep -E "tests passed" $OUT/ctest-1.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-1.txt; grep "Total Test time" $OUT/ctest-1.txt)
S="b=8,c=4096,t=1300;b=1,c=8192,t=512;b=32,c=4096,t=64;b=4,c=4096,t=2048"
for d in bf16 f32; do
  timeout 45 $SB $K tune conv1d_cl --sweep kernel_src/conv1d_cl.sweep.toml --dtype $d --shapes "$S" \
    --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-cl-$d.txt 2>&1
  echo "tune $d rc $? at $SECONDS s"; grep "recorded" $OUT/tune-cl-$d.txt | cut -c40-220
done
cp kernel_src/tuned_h200.toml $OUT/table.toml
(cd bench && timeout -s INT $((400 - SECONDS)) python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/conv1d_cl.csv > $OUT/grid-conv1d_cl.txt 2>&1; grep -E "summary|interrupted" $OUT/grid-conv1d_cl.txt)
echo "done at $SECONDS s"
