#!/usr/bin/env bash
# call5: the GPU suite twice at the session's last tree (the project file names its tuned
# table; audit and check refuse an empty kernel tree, a missing project table and an unread
# contract define).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
for i in 1 2; do
  (cd build-py && timeout 250 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call5-$i.txt 2>&1; grep -E "tests passed" $OUT/ctest-call5-$i.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call5-$i.txt)
  echo "ctest $i at $SECONDS s"
done
