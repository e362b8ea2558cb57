#!/usr/bin/env bash
# Call 4: the GPU suite, then the whole rms_norm grid against the peers in both dtypes (the re-tuned table).
bash scripts/on_device.sh >/dev/null 2>&1; export KJIT_CACHE_DIR=/tmp/kc
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
(cd build-py && ctest -L gpu -j 8 > $OUT/ctest2.txt 2>&1)
cd bench && for d in bf16 f32; do PYTHONPATH=../build-py/python timeout 200 python3 peers_grid.py grids/rms_norm.toml --dtype $d \
  --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/rms_norm-$d.csv > $OUT/grid-$d.txt 2>&1; done
