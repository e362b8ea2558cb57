#!/usr/bin/env bash
# call7: the whole GPU suite after warp_sum became lane_sum<32> (CUBINs identical at the table's sets).
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
PY=$(command -v python3); echo "python: $PY"
mkdir -p /root/.pyenv/versions/3.12.1/bin
for p in python3 python3.12; do
  w=/root/.pyenv/versions/3.12.1/bin/$p
  [ "$w" = "$PY" ] || { rm -f $w; printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > $w; chmod +x $w; }
done
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
for i in 1 2; do
(cd build-py && timeout 170 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$i.txt 2>&1; grep -E "tests passed" $OUT/ctest-$i.txt; grep -E "\(Failed\)|Timeout|Not Run|Skipped" $OUT/ctest-$i.txt; grep "Total Test time" $OUT/ctest-$i.txt)
done
