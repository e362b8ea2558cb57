#!/usr/bin/env bash
# Call 7: the GPU suite, the old source (HEAD before RMS_N, copied to .gl/exp/srcA) against the new one
# with RMS_N = n (same table defines, one output buffer, A B B A), the rms_norm grid against the
# peers in both dtypes (kjit with RMS_N = n), the GPU suite again.
# In that call peers_grid.py's rms_norm_launcher added RMS_N = n to every kjit build (a change
# reverted before the commit), and so did ab.py's launcher for both arms: the A B B A stopped at
# once (the old source does not read RMS_N), the grids ran with the width at every shape.
bash scripts/on_device.sh >/dev/null 2>&1; export KJIT_CACHE_DIR=/tmp/kc
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
(cd build-py && timeout 150 ctest -L gpu -j 8 > $OUT/ctest1.txt 2>&1); tail -3 $OUT/ctest1.txt
PYTHONPATH=$PWD/build-py/python timeout 170 python3 .gl/exp/ab.py .gl/exp/srcA kernel_src bf16,f32 n 0 > $OUT/ab-width.txt 2>&1; tail -1 $OUT/ab-width.txt
cd bench && for d in bf16 f32; do PYTHONPATH=../build-py/python timeout 120 python3 peers_grid.py grids/rms_norm.toml --dtype $d \
  --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/rms_norm-$d.csv > $OUT/grid-$d.txt 2>&1; tail -2 $OUT/grid-$d.txt; done; cd ..
(cd build-py && timeout 100 ctest -L gpu -j 8 > $OUT/ctest2.txt 2>&1); tail -3 $OUT/ctest2.txt
