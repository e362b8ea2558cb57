#!/usr/bin/env bash
# Call 8: the GPU suite; each rms_norm entry of up to 256 rows swept with its width compiled in
# (RMS_N = n) against the run-time width, winners recorded into the table (diff after each); the
# rms_norm grid against the peers with the resulting table.
bash scripts/on_device.sh >/dev/null 2>&1; export KJIT_CACHE_DIR=/tmp/kc
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
(cd build-py && timeout 120 ctest -L gpu -j 8 > $OUT/ctest.txt 2>&1); tail -3 $OUT/ctest.txt
cp kernel_src/tuned_h200.toml /tmp/tuned.orig
end=$((SECONDS + 200))
for f in bench/tune/rms_norm_width/*.sweep.toml; do
  [ $SECONDS -ge $end ] && { echo "out of time before $f" >> $OUT/sweeps.txt; break; }
  echo "== $f" >> $OUT/sweeps.txt
  timeout 30 build-py/tools/kjit sweep $f --src kernel_src --record kernel_src/tuned_h200.toml --out /tmp/sw >> $OUT/sweeps.txt 2>&1
  diff -u /tmp/tuned.orig kernel_src/tuned_h200.toml > $OUT/tuned.diff
done
grep -c "^== " $OUT/sweeps.txt
cd bench && for d in bf16 f32; do PYTHONPATH=../build-py/python timeout 100 python3 peers_grid.py grids/rms_norm.toml --dtype $d \
  --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/rms_norm-$d.csv > $OUT/grid-$d.txt 2>&1; tail -1 $OUT/grid-$d.txt; done
