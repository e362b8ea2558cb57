#!/usr/bin/env bash
# call1: the delta_rule tests (the guard included) and digests; conv1d's digests with the per-lane
# vector path; conv1d at short rows old/new against causal-conv1d; rms_norm's large rows in ncu.
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
PY=$(command -v python3); echo "python: $PY"
mkdir -p /root/.pyenv/versions/3.12.1/bin
for p in python3 python3.12; do
  w=/root/.pyenv/versions/3.12.1/bin/$p
  [ "$w" = "$PY" ] || { rm -f $w; printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > $w; chmod +x $w; }
done
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
export PYTHONPATH=$PWD/build-py/python
K=build-py/tools/kjit
(cd build-py && timeout 150 ctest -L gpu -R "delta" --output-on-failure > $OUT/ctest-dr.txt 2>&1; grep -E "tests passed|Failed|rror" $OUT/ctest-dr.txt | head)
(cd build-py && ./tests/test_kernels -tc="a delta_rule launch made without*" -s > $OUT/trap.txt 2>&1; grep -E "CUDA_ERROR|status|assertions" $OUT/trap.txt | head -5)
for v in "" "DR_VEC=4" "DR_VEC=2 DR_BV=64 DR_KSPLIT=4 DR_DK=64 DR_DV=64"; do
  timeout 60 $K digest check delta_rule $(for d in $v; do echo -D $d; done) > $OUT/digest-dr.txt 2>&1; echo "delta_rule digest [$v] rc $? $(grep -c IDENTICAL $OUT/digest-dr.txt) identical $(grep -c DIFFERS $OUT/digest-dr.txt) differ"
done
for v in "" "CONV_TILE=4 CONV_BLOCK=128" "CONV_TILE=8 CONV_SEGS=2" "CONV_TILE=32 CONV_SEGS=1"; do
  for k in conv1d conv1d_update; do
  timeout 60 $K digest check $k $(for d in $v; do echo -D $d; done) > $OUT/digest-cv.txt 2>&1; echo "$k digest [$v] rc $? $(grep -c IDENTICAL $OUT/digest-cv.txt) identical $(grep -c DIFFERS $OUT/digest-cv.txt) differ"
  done
done
S="f32:1:1024:64,f32:1:4096:64,f32:4:1024:64,f32:1:1024:512,f32:1:4096:512,f32:4:1024:512,f32:1:8192:512,f32:4:4096:64,bf16:1:1024:64,bf16:1:1024:512,bf16:1:1024:2048,bf16:4:1024:2048,bf16:1:4096:2048"
V="4/32/1,4/64/1,4/128/1,4/128/2,4/256/1,8/32/1,8/64/1,8/128/1,16/32/1,16/64/1,16/128/1"
timeout 330 python3 bench/grids/results/short-rows-2026-12-02/conv_ab.py .gl/exp/old_src kernel_src "$S" "$V" > $OUT/conv_ab.txt 2>&1; echo "conv_ab rc $?"; grep -c "same bits" $OUT/conv_ab.txt; grep -c "DIFFER" $OUT/conv_ab.txt
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind TRITON_CACHE_DIR=/tmp/tc
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__occupancy_limit_registers,launch__waves_per_multiprocessor,smsp__inst_executed.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,sm__cycles_active.avg
timeout 200 ncu --cache-control all --clock-control none -k regex:'rms|triton' --metrics $M --csv python3 bench/grids/results/rms-large-2026-12-02/ncu_large.py kernel_src > $OUT/ncu-large.csv 2> $OUT/ncu-large.err; echo "ncu rc $?"
mkdir -p $OUT/triton; find /tmp/tc /tmp/ind -name "*.ptx" -o -name "*.json" -path "*tc*" 2>/dev/null | head -40 | while read f; do cp "$f" $OUT/triton/ 2>/dev/null; done; ls $OUT/triton | head
