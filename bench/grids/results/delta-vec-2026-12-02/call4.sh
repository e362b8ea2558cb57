#!/usr/bin/env bash
# call4: the delta_rule grid against fla with the re-tuned table; the whole GPU suite.
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
(cd bench && PYTHONPATH=../build-py/python timeout -s INT 300 python3 peers_grid.py grids/delta_rule.toml --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/delta_rule-2026-12-02.csv > $OUT/grid.txt 2>&1); tail -3 $OUT/grid.txt
(cd build-py && timeout 240 ctest -L gpu -j 8 > $OUT/ctest-1.txt 2>&1; tail -3 $OUT/ctest-1.txt; grep -E "\(Failed\)|Timeout" $OUT/ctest-1.txt)
