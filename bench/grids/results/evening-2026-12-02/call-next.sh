#!/usr/bin/env bash
# Prepared for the next session (not run): what this session's device time did not reach.
# (1) the fp32 rms_norm grid and the conv1d grid with this table; (2) conv1d fp32 t = 512 at
# batch 1 in ncu against causal-conv1d (warp states, issue, memory); (3) the three long fp32
# conv1d shapes still untuned.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python TORCHINDUCTOR_CACHE_DIR=/tmp/ind TRITON_CACHE_DIR=/tmp/tc
(cd bench && timeout -s INT 100 python3 peers_grid.py grids/rms_norm.toml --dtype f32 --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/rms_norm-f32.csv > $OUT/grid-rms-f32.txt 2>&1; grep summary $OUT/grid-rms-f32.txt)
(cd bench && timeout -s INT 60 python3 peers_grid.py grids/conv1d.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/conv1d.csv > $OUT/grid-conv1d.txt 2>&1; grep summary $OUT/grid-conv1d.txt)
timeout 150 ncu --cache-control all --clock-control none -k regex:'conv1d' --section SpeedOfLight \
  --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --csv --page details \
  python3 bench/grids/results/evening-2026-12-02/conv_ncu.py kernel_src > $OUT/ncu-conv.csv 2> $OUT/ncu-conv.err
echo "ncu rc $?"
timeout $((580 - SECONDS)) build-py/tools/kjit tune conv1d --sweep kernel_src/conv1d.sweep.toml --table kernel_src/tuned_h200.toml \
  --src kernel_src --dtype f32 --shapes 'b=4,c=4096,t=8192;b=4,c=8192,t=2048;b=4,c=8192,t=8192' > $OUT/tune-conv1d-f32.txt 2>&1
echo "tune rc $?"; cp kernel_src/tuned_h200.toml $OUT/table.toml
