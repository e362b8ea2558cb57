#!/usr/bin/env bash
# call3: rms_norm at rows 256 - 8192 with the row width compiled in (RMS_N = n; the table's entries
# at these rows run the run-time width), and with the weight loaded early too (RMS_W_EARLY = 1),
# against the table's define set (rms_ab.py, 1 and 32 calls per graph, L2 flushed per
# repetition), Liger beside. Same source: main's.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
mkdir -p /tmp/o
AB=bench/grids/results/latency-2026-12-03/rms_ab.py
for d in bf16 f32; do
  for n in 1024 2048 4096 7168; do
    timeout 100 python3 $AB kernel_src/tuned_h200.toml $d 256x$n,2048x$n,8192x$n main=kernel_src N=kernel_src@RMS_N=$n NW=kernel_src@RMS_N=$n,RMS_W_EARLY=1 >> /tmp/o/rmsn-$d.txt 2>&1; echo "$d $n rc $? at $SECONDS s"
  done
done
cp /tmp/o/*.txt $OUT/
echo "done at $SECONDS s"
