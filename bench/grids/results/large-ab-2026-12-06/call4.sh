#!/usr/bin/env bash
# conv1d_cl's eager loads as the default (the H200 entries pinned to CONV_CL_EAGER=0): the gpu
# suite twice.
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu4.txt
for i in 1 2; do
  (cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-default-$i.txt 2>&1; echo "ctest $i rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-default-$i.txt)")
done
