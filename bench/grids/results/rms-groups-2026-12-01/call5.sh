#!/usr/bin/env bash
# Two rows per warp with the hardware bf16 pair conversion (kernel_src) against without (src_prev), A B B A by sweep;
# then re-tune bf16 narrow rows, the peers there, and the GPU suite.
set -u
bash scripts/on_device.sh && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
mkdir -p /tmp/g4
for spec in "bf16 32768 1024" "bf16 8192 1024" "bf16 32768 2048"; do set -- $spec
cat > /tmp/g4/p.toml <<T
kernel = "rms_norm"
dtype = "$1"
[shape]
rows = $2
n = $3
[defines]
RMS_WIDTH = 1024
[sweep]
RMS_WARP_ROWS = [1, 2]
RMS_BLOCK = [64, 128, 256, 1024]
RMS_CACHE = [$([ $3 = 1024 ] && echo 4 || echo 8)]
[check]
mode = "digest"
baseline = { RMS_WARP_ROWS = 1, RMS_BLOCK = 128 }
[bench]
warmup = 5
reps = 30
flush_l2 = true
T
for arm in new prev prev new; do src=kernel_src; [ $arm = prev ] && src=.gl/exp/src_prev
  echo "== $arm $spec" >> $OUT/ab.txt; build-py/tools/kjit sweep --no-cache /tmp/g4/p.toml --src $src --out /tmp/g4/o > /tmp/g4/s.txt 2>&1
  grep -E "IDENTICAL|DIFF|error" /tmp/g4/s.txt | sed -E 's/ +/ /g' >> $OUT/ab.txt; done
done
(cd build-py && ctest -L gpu -j 8 > $OUT/ctest.txt 2>&1; tail -3 $OUT/ctest.txt; grep -E "\(Failed\)|Timeout" $OUT/ctest.txt)
