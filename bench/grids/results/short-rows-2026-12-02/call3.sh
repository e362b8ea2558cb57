#!/usr/bin/env bash
# call3: the conv1d and delta_rule grids against their peers with the re-tuned table; the whole
# GPU suite twice (the Python suite through torch's python3).
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
PY=$(command -v python3); echo "python: $PY"
mkdir -p /root/.pyenv/versions/3.12.1/bin
for p in python3 python3.12; do
  w=/root/.pyenv/versions/3.12.1/bin/$p
  [ "$w" = "$PY" ] || { rm -f $w; printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > $w; chmod +x $w; }
done
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
G=${GRIDS:-conv1d delta_rule}
for g in $G; do
  (cd bench && PYTHONPATH=../build-py/python timeout -s INT ${GRID_S:-200} python3 peers_grid.py grids/$g.toml --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/$g-2026-12-02b.csv > $OUT/grid-$g.txt 2>&1); grep summary $OUT/grid-$g.txt; echo "elapsed $SECONDS s"
done
for i in $(seq 1 ${SUITES:-2}); do
(cd build-py && timeout 250 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$i.txt 2>&1; grep -E "tests passed" $OUT/ctest-$i.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-$i.txt; grep "Total Test time" $OUT/ctest-$i.txt)
done
grep -h "SKIPPED" build-py/Testing/Temporary/LastTest.log | sort -u | head -3
# rms_norm with the multi-slot warp sums (.gl/exp/multi_src) against this tree's kernel, the
# table's defines at both arms, bits compared (when the call has time left)
if [ -d .gl/exp/multi_src ] && [ $SECONDS -lt ${AB_BEFORE:-420} ]; then
  timeout 150 python3 .gl/exp/ab.py kernel_src .gl/exp/multi_src f32,bf16 - 0 > $OUT/ab-multi.txt 2>&1; echo "ab rc $?"; tail -1 $OUT/ab-multi.txt; grep -c DIFFER $OUT/ab-multi.txt
fi
