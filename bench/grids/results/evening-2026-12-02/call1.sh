#!/usr/bin/env bash
# call1: (1) rms_norm with the multi-slot warp sums (.gl/exp/multi_src, branch rms-multi) against
# main's kernel at 17 shapes in both dtypes (the table's defines at both arms, bits compared);
# (2) conv1d with power-of-two shifts for the row split (.gl/exp/conv_src) against main's
# kernel and causal-conv1d at short rows; (3) the conv1d and delta_rule grids against their peers
# with the table re-tuned on 2026-12-02, in the time left.
set -u
bash scripts/on_device.sh --peers .gl/whl > /tmp/on_device.txt 2>&1 || cat /tmp/on_device.txt
# The first run lacked PYTHONPATH: its two A/Bs failed to import kjit and were re-run with it.
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python
timeout 170 python3 .gl/exp/ab.py kernel_src .gl/exp/multi_src f32,bf16 - 0 > $OUT/ab-multi.txt 2>&1
echo "ab rc $?"; tail -1 $OUT/ab-multi.txt; grep -c DIFFER $OUT/ab-multi.txt; echo "elapsed $SECONDS s"
timeout 100 python3 bench/grids/results/short-rows-2026-12-02/conv_ab.py kernel_src .gl/exp/conv_src \
  f32:1:4096:512,f32:1:1024:512,f32:1:8192:512,f32:4:4096:512,bf16:1:4096:512,f32:4:4096:64,f32:1:4096:2048 \
  8/64/1,4/128/1 > $OUT/conv-pow2.txt 2>&1; echo "conv rc $?"; grep -c DIFFER $OUT/conv-pow2.txt; echo "elapsed $SECONDS s"
for g in conv1d delta_rule; do
  left=$(( ${CALL_S:-570} - SECONDS )); [ $g = conv1d ] && [ $left -gt 220 ] && left=220
  [ $left -lt 30 ] && break
  (cd bench && PYTHONPATH=../build-py/python timeout -s INT $left python3 peers_grid.py grids/$g.toml \
     --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/$g-2026-12-02c.csv > $OUT/grid-$g.txt 2>&1)
  grep summary $OUT/grid-$g.txt; echo "elapsed $SECONDS s"
done
