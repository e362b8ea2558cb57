#!/usr/bin/env bash
# call5: rms_norm's 12 entries at 256 rows re-tuned with the decode-chain sweep
# (bench/tune/rms_norm_decode_graph.sweep.toml: 32 calls per graph, RMS_N and RMS_ONE_ROW among
# its knobs, which the sweeps these entries came from lacked), then those shapes against the
# peers with the new table (peers_grid.py on rms256.toml).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/rows256-2026-12-04
S="rows=256,n=1024;rows=256,n=2048;rows=256,n=4096;rows=256,n=7168;rows=256,n=8192;rows=256,n=16384"
for d in f32 bf16; do
  t0=$SECONDS
  timeout 150 build-py/tools/kjit tune rms_norm --table kernel_src/tuned_h200.toml --sweep bench/tune/rms_norm_decode_graph.sweep.toml --dtype $d --shapes "$S" 2>&1
  echo "== $d: rc $? in $((SECONDS - t0)) s"
done > $OUT/tune5.txt
echo "tuned at $SECONDS s"; grep -E "^==|recorded" $OUT/tune5.txt
cp kernel_src/tuned_h200.toml $OUT/
(cd bench && timeout 200 python3 peers_grid.py ../$R/rms256.toml --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/grid256.csv > $OUT/grid256.txt 2>&1)
echo "grid rc $? at $SECONDS s"; grep -E "^(f32|bf16)|summary" $OUT/grid256.txt | cut -c1-150
