#!/usr/bin/env bash
# call5: (1) rms_norm decode rows from a source whose RMS_N kernel holds only the compiled-in
# width (616 instructions against 1704 at the table's B512 n = 1024 set; 312 without the
# element-by-element fallback) against main's, vs Liger, and ncu's view; (2) delta_rule's small
# heads: the table's define set against the morning's BV16xK16 and others, vs fla.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TORCHINDUCTOR_CACHE_DIR=/tmp/ind TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/retune-2026-12-03
mkdir -p /tmp/o
timeout 120 python3 $R/rms_strict_ab.py kernel_src .gl/exp/rms_strict > /tmp/o/rms_strict_ab.txt 2>&1; echo "rms ab rc $? at $SECONDS s"
timeout 90 python3 bench/grids/results/delta-vec-2026-12-02/dr_ab.py kernel_src kernel_src "1x16x64,1x32x64,1x64x64,4x16x64" \
  "16/16/1/1,16/8/1/1,32/4/1/1,32/8/1/1,16/4/1/1,8/8/1/1" > /tmp/o/dr_small_ab.txt 2>&1; echo "dr ab rc $? at $SECONDS s"
timeout 100 ncu --cache-control none --clock-control none -k regex:'rms' --section SpeedOfLight --section LaunchStats \
  --section WarpStateStats --section InstructionStats --csv --page details \
  python3 $R/rms_strict_ab.py kernel_src .gl/exp/rms_strict ncu > /tmp/o/ncu-rms-strict.csv 2> /tmp/o/ncu-rms-strict.err; echo "ncu rc $? at $SECONDS s"
tar -C /tmp/o -czf $OUT/call5.tgz .
