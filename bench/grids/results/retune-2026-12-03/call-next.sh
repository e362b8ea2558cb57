#!/usr/bin/env bash
# Prepared for the next session (not run): where kjit's rms_norm decode kernel waits. ncu's raw
# warp-state metrics (stall reasons per issued instruction) and the source counters (PC sampling)
# for the table's bf16 1 x 1024 kernel, the two stripped sources and Liger's, in the warm state of
# a decode chain (--cache-control none). One tar back (a call returns at most 8 files).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/retune-2026-12-03
mkdir -p /tmp/o .gl/exp/rms_strict
cp kernel_src/*.cuh kernel_src/rms_norm.cu .gl/exp/rms_strict/ && patch -d .gl/exp/rms_strict -p0 rms_norm.cu < $R/rms_strict.diff
timeout 200 ncu --cache-control none --clock-control none -k regex:'rms' --section WarpStateStats --section SourceCounters \
  --page raw --csv python3 $R/rms_strict_ab.py kernel_src .gl/exp/rms_strict ncu > /tmp/o/ncu-rms-stalls.csv 2> /tmp/o/ncu-rms-stalls.err
echo "ncu raw rc $? at $SECONDS s"
timeout 200 ncu --cache-control none --clock-control none -k regex:'rms' --section SourceCounters --page source --print-source sass \
  --csv python3 $R/rms_strict_ab.py kernel_src .gl/exp/rms_strict ncu > /tmp/o/ncu-rms-source.csv 2> /tmp/o/ncu-rms-source.err
echo "ncu source rc $? at $SECONDS s"
tar -C /tmp/o -czf $OUT/next.tgz .
