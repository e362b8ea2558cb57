#!/usr/bin/env bash
# call7: kjit's arm of the peer harness launched through kjit.plan (the contract's entry point,
# grid, block and named parameters; no geometry written in Python): a small grid of each kernel
# (*-smoke.toml), every output compared with the peer's as in the full grids; then the GPU suite
# (python_gpu has the plan-driven launch).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=grids/results/plan-2026-12-04
cd bench
for k in conv1d conv1d_update delta_rule rms_norm; do
  timeout 100 python3 peers_grid.py $R/$k-smoke.toml --src ../kernel_src --table ../kernel_src/tuned_h200.toml > $OUT/smoke-$k.txt 2>&1
  echo "$k rc $? at $SECONDS s"; grep -E "summary" $OUT/smoke-$k.txt | cut -c1-220
done
cd ../build-py && timeout 170 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest7.txt 2>&1
echo "ctest rc $? at $SECONDS s"; grep -E "tests passed|Failed|Timeout" $OUT/ctest7.txt
