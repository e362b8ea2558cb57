#!/usr/bin/env bash
# call4: rms_norm's entries at rows 256 - 8192 x n 1024 - 4096 re-tuned with
# bench/tune/rms_norm_mid.sweep.toml (adds RMS_N and RMS_W_EARLY), then the new table against the
# old one (.gl/exp/table_old.toml) at those shapes (tables_ab.py), Liger beside. One tar back.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
R=bench/grids/results/stage-2026-12-03
S='rows=256,n=1024;rows=2048,n=1024;rows=8192,n=1024;rows=256,n=2048;rows=2048,n=2048;rows=8192,n=2048;rows=256,n=4096;rows=2048,n=4096;rows=8192,n=4096'
rm -rf /tmp/o; mkdir -p /tmp/o
for d in bf16 f32; do
  timeout 250 /usr/bin/time -f "tune $d %e s" $K tune rms_norm --sweep bench/tune/rms_norm_mid.sweep.toml --dtype $d --shapes "$S" --table kernel_src/tuned_h200.toml --src kernel_src > /tmp/o/tune-mid-$d.txt 2>&1
  echo "$d rc $? at $SECONDS s: $(tail -n 1 /tmp/o/tune-mid-$d.txt)"
done
cp kernel_src/tuned_h200.toml /tmp/o/table-call4.toml
SH=256x1024,2048x1024,8192x1024,256x2048,2048x2048,8192x2048,256x4096,2048x4096,8192x4096
for d in bf16 f32; do
  timeout 100 python3 $R/tables_ab.py .gl/exp/table_old.toml kernel_src/tuned_h200.toml $d $SH > /tmp/o/tables-ab-$d.txt 2>&1; echo "ab $d rc $? at $SECONDS s"
done
tar -C /tmp/o -czf $OUT/call4.tgz .
echo "done at $SECONDS s"
