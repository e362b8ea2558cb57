#!/usr/bin/env bash
# call6: the whole GPU suite, twice (the Python suite through the python3 on PATH, torch's).
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
PY=$(command -v python3); echo "python: $PY"
mkdir -p /root/.pyenv/versions/3.12.1/bin
for p in python3 python3.12; do
  w=/root/.pyenv/versions/3.12.1/bin/$p
  [ "$w" = "$PY" ] || { rm -f $w; printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > $w; chmod +x $w; }
done
python3 -c "import torch; print('torch', torch.__version__)"
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
for i in 1 2; do
(cd build-py && timeout 250 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$i.txt 2>&1; grep -E "tests passed" $OUT/ctest-$i.txt; grep -E "\(Failed\)|Timeout|Not Run|Skipped" $OUT/ctest-$i.txt; grep "Total Test time" $OUT/ctest-$i.txt)
done
grep -h "SKIPPED" build-py/Testing/Temporary/LastTest.log | sort -u | head -3
