#!/usr/bin/env bash
# call1: delta_rule's guard inside the width-specialized path (kernel_src) against main's kernel
# and the kernel before the guard (604479d), every grid shape at its table defines; conv1d's
# shift/mask split (.gl/exp/conv_shift) against main's at the short rows; the fp32 rms_norm
# grid and the conv1d grid with main's table.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python TORCHINDUCTOR_CACHE_DIR=/tmp/ind TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/retune-2026-12-03
timeout 150 python3 $R/dr_ab.py kernel_src/tuned_h200.toml main=.gl/exp/dr_main guard=kernel_src pre=.gl/exp/dr_pre > $OUT/dr_ab.txt 2>&1
echo "dr_ab rc $? at $SECONDS s"
timeout 120 python3 bench/grids/results/short-rows-2026-12-02/conv_ab.py .gl/exp/dr_main .gl/exp/conv_shift \
  "f32:1:1024:64,f32:1:4096:64,f32:4:4096:64,f32:4:1024:64,bf16:1:1024:64,bf16:4:4096:64,f32:1:1024:512,f32:1:4096:512" "16/64/1" > $OUT/conv_shift_ab.txt 2>&1
echo "conv ab rc $? at $SECONDS s"
(cd bench && timeout -s INT 110 python3 peers_grid.py grids/rms_norm.toml --dtype f32 --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/rms_norm-f32.csv > $OUT/grid-rms-f32.txt 2>&1; grep summary $OUT/grid-rms-f32.txt)
echo "rms grid at $SECONDS s"
(cd bench && timeout -s INT 70 python3 peers_grid.py grids/conv1d.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/conv1d.csv > $OUT/grid-conv1d.txt 2>&1; grep summary $OUT/grid-conv1d.txt)
echo "conv grid at $SECONDS s"
timeout $((585 - SECONDS)) ncu --cache-control none --clock-control none -k regex:'rms|triton' --section SpeedOfLight \
  --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --csv --page details \
  python3 $R/rms_decode_ncu.py kernel_src > $OUT/ncu-rms-decode.csv 2> $OUT/ncu-rms-decode.err
echo "ncu rc $? at $SECONDS s"
