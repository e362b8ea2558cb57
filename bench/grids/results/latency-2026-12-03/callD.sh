#!/usr/bin/env bash
# callD: what a decode row's exact 1 / sqrt (sqrtf then a division, each rounded once) and the
# block width cost against Liger: the table's kernel, one with rsqrtf (other bits: an experiment
# only), and both at blocks of 128 threads (Liger's 4 warps), bf16 and fp32.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=bench/grids/results/latency-2026-12-03
mkdir -p .gl/exp/rms_rsqrt && cp kernel_src/*.cuh kernel_src/rms_norm.cu .gl/exp/rms_rsqrt/
sed -i 's|return 1.0f / sqrtf(__fadd_rn(total / static_cast<float>(n), eps));|return rsqrtf(total / static_cast<float>(n) + eps);|' .gl/exp/rms_rsqrt/rms_norm.cu
grep -c rsqrtf .gl/exp/rms_rsqrt/rms_norm.cu
for d in bf16 f32; do
  timeout 200 python3 $R/rms_ab.py kernel_src/tuned_h200.toml $d 1x1024,32x1024,1x4096 main=kernel_src \
    rsqrt=.gl/exp/rms_rsqrt b128=kernel_src@RMS_BLOCK=128 rsqrt128=.gl/exp/rms_rsqrt@RMS_BLOCK=128 \
    > $OUT/rms_math_ab-$d.txt 2>&1
  echo "$d rc $? at $SECONDS s"
done
