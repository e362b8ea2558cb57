#!/usr/bin/env bash
# The gpu suite once at the tree it is run from (this session's last code), in what device time
# was left after call2.sh's requests were refused.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
cat $OUT/gpu.txt
(cd build-py && timeout 172 ctest -L gpu -j 12 --output-on-failure > $OUT/ctest-1.txt 2>&1
 echo "ctest 1 rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-1.txt)")
grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-1.txt | head
