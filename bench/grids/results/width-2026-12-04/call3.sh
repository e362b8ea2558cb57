#!/usr/bin/env bash
# call3: the diagnostic kernel (RMS_MIN=0), the table's kernel and Liger's at bf16 1 x 1024 in
# ncu (warm, no cache control), and Liger's compiled kernel (Triton's cache) for its SASS.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/width-2026-12-04
mkdir -p /tmp/o && rm -rf /tmp/o/*
python3 $R/min_ncu.py 1 > /tmp/o/warm.txt 2>&1
find /tmp/tc -name '*rms_norm_forward*' -exec cp {} /tmp/o/ \;
find /tmp/kc -name '*.cubin' | head -0
timeout 200 ncu --cache-control none --clock-control none -k regex:'rms' \
  --metrics gpu__time_duration.sum,sm__cycles_active.max,smsp__cycles_active.max,smsp__inst_executed.sum,smsp__warps_launched.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__shared_mem_config_size,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct \
  --section WarpStateStats --csv --page raw python3 $R/min_ncu.py 8 > /tmp/o/ncu-min.csv 2> /tmp/o/ncu-min.err
echo "ncu rc $? at $SECONDS s"
tar -czf $OUT/call3.tgz -C /tmp/o .
