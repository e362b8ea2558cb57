#!/usr/bin/env bash
# Re-tune rms_norm's narrow rows with RMS_WARP_ROWS [0, 1, 2], the peers on those shapes, rows per warp 2 vs 3, the GPU suite.
set -u
bash scripts/on_device.sh && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
(cd build-py && ctest -L gpu -j 8 > $OUT/ctest.txt 2>&1; tail -3 $OUT/ctest.txt; grep -E "\(Failed\)|Timeout" $OUT/ctest.txt)
cp kernel_src/tuned_h200.toml /tmp/tuned.orig
S='rows=2048,n=1024;rows=8192,n=1024;rows=16384,n=1024;rows=32768,n=1024;rows=2048,n=2048;rows=8192,n=2048;rows=16384,n=2048;rows=32768,n=2048'
for d in bf16 f32; do
  /usr/bin/time -f "tune $d %e s" build-py/tools/kjit tune rms_norm --sweep bench/tune/rms_norm.sweep.toml --dtype $d \
    --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$S" > $OUT/tune-$d.txt 2>&1
  tail -2 $OUT/tune-$d.txt
done
diff -u /tmp/tuned.orig kernel_src/tuned_h200.toml > $OUT/tuned.diff
(cd bench && for d in bf16 f32; do PYTHONPATH=../build-py/python /usr/bin/time -f "grid $d %e s" python3 peers_grid.py ../.gl/exp/rms_norm_narrow.toml --dtype $d \
   --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv /tmp/rms_norm-$d.csv > $OUT/grid-$d.txt 2>&1; tail -12 $OUT/grid-$d.txt; done)
printf 'bf16 32768 1024\nbf16 8192 1024\n' > /tmp/k3.txt
mkdir -p /tmp/g3 && for spec in "bf16 32768 1024" "bf16 8192 1024"; do set -- $spec
cat > /tmp/g3/k3.toml <<T
kernel = "rms_norm"
dtype = "$1"
[shape]
rows = $2
n = $3
[defines]
RMS_WIDTH = 1024
RMS_CACHE = 4
[sweep]
RMS_WARP_ROWS = [2, 3]
RMS_BLOCK = [64, 128, 256]
[check]
mode = "digest"
baseline = { RMS_WARP_ROWS = 2, RMS_BLOCK = 128 }
[bench]
warmup = 5
reps = 30
flush_l2 = true
T
echo "== k3 $spec" >> $OUT/k3.txt; build-py/tools/kjit sweep /tmp/g3/k3.toml --src kernel_src --out /tmp/g3/o >> $OUT/k3.txt 2>&1; done
grep -E "^==|IDENTICAL|DIFF" $OUT/k3.txt | cut -c1-60,150-
