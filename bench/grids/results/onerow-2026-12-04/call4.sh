#!/usr/bin/env bash
# call4: the GPU suite again at the final kernel and table (the second run of call3's tree).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
(cd build-py && timeout 250 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call4.txt 2>&1; grep -E "tests passed" $OUT/ctest-call4.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call4.txt)
echo "ctest at $SECONDS s"
