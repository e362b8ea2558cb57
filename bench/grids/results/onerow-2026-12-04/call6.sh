#!/usr/bin/env bash
# call6: the GPU suite twice at 862eda2 (the review mends: the Engine shares the unread-define
# refusal; the contract define check; audit messages).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
for i in 1 2; do
  (cd build-py && timeout 250 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call6-$i.txt 2>&1; grep -E "tests passed" $OUT/ctest-call6-$i.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call6-$i.txt)
  echo "ctest $i at $SECONDS s"
done
