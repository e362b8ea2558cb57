#!/usr/bin/env bash
# callB: where the rms_norm decode kernel waits (retune-2026-12-03/call-next.sh: ncu warp-state
# metrics and PC sampling of the bf16 1 x 1024 kernels against Liger's), then ncu's view of the
# conv1d fp32 t = 512 batch-1 misses against causal-conv1d.
set -u
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
bash bench/grids/results/retune-2026-12-03/call-next.sh
echo "next done at $SECONDS s"
timeout 150 ncu --cache-control all --clock-control none -k regex:'conv|causal' --section SpeedOfLight \
  --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --csv --page details \
  python3 bench/grids/results/evening-2026-12-02/conv_ncu.py kernel_src > /tmp/conv-ncu.csv 2> /tmp/conv-ncu.err
echo "conv ncu rc $? at $SECONDS s"
tar -czf $OUT/conv-ncu.tgz -C /tmp conv-ncu.csv conv-ncu.err
# What the exact 1 / sqrt costs a decode row: the table's kernel against one with rsqrtf (other
# bits, an experiment only), each against Liger, 1 and 32 calls per graph.
mkdir -p .gl/exp/rms_rsqrt && cp kernel_src/*.cuh kernel_src/rms_norm.cu .gl/exp/rms_rsqrt/
sed -i 's|return 1.0f / sqrtf(__fadd_rn(total / static_cast<float>(n), eps));|return rsqrtf(total / static_cast<float>(n) + eps);|' .gl/exp/rms_rsqrt/rms_norm.cu
grep -c rsqrtf .gl/exp/rms_rsqrt/rms_norm.cu
timeout 120 python3 bench/grids/results/retune-2026-12-03/rms_strict_ab.py kernel_src .gl/exp/rms_rsqrt > $OUT/rms_rsqrt_ab.txt 2>&1
echo "rsqrt ab rc $? at $SECONDS s"
