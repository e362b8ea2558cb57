#!/usr/bin/env bash
# call9.sh MODE: re-tune rms_norm after the bf16 pair conversion in every form and the warp rows'
# single cached path. MODE 1: bf16 rows of 1024 and 2048 (main sweep) and of 4096 and wider (wide sweep).
# MODE 2: bf16 decode rows, fp32 2048 x 1024 (the one fp32 entry whose code changed), the GPU suite.
set -u
bash scripts/on_device.sh && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
cp kernel_src/tuned_h200.toml /tmp/tuned.orig
NARROW='rows=2048,n=1024;rows=8192,n=1024;rows=16384,n=1024;rows=32768,n=1024;rows=2048,n=2048;rows=8192,n=2048;rows=16384,n=2048;rows=32768,n=2048'
WIDE='rows=2048,n=4096;rows=8192,n=4096;rows=16384,n=4096;rows=32768,n=4096;rows=2048,n=7168;rows=8192,n=7168;rows=16384,n=7168;rows=32768,n=7168;rows=2048,n=8192;rows=8192,n=8192;rows=16384,n=8192;rows=32768,n=8192;rows=2048,n=16384;rows=8192,n=16384;rows=16384,n=16384;rows=32768,n=16384'
DEC='rows=1,n=1024;rows=32,n=1024;rows=256,n=1024;rows=1,n=2048;rows=32,n=2048;rows=256,n=2048;rows=1,n=4096;rows=32,n=4096;rows=256,n=4096;rows=1,n=7168;rows=32,n=7168;rows=256,n=7168;rows=1,n=8192;rows=32,n=8192;rows=256,n=8192;rows=1,n=16384;rows=32,n=16384;rows=256,n=16384'
tune() { # seconds dtype sweep shapes
  /usr/bin/time -f "tune $2 $3 %e s" timeout $1 build-py/tools/kjit tune rms_norm --sweep bench/tune/$3.sweep.toml --dtype $2 \
    --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$4" > $OUT/tune-$2-$3.txt 2>&1
  tail -1 $OUT/tune-$2-$3.txt; grep -c "recorded in" $OUT/tune-$2-$3.txt
  diff -u /tmp/tuned.orig kernel_src/tuned_h200.toml > $OUT/tuned.diff
}
case $1 in
1) tune 300 bf16 rms_norm "$NARROW"; tune 250 bf16 rms_norm_wide "$WIDE" ;;
2) tune 150 bf16 rms_norm_wide 'rows=8192,n=16384;rows=16384,n=16384;rows=32768,n=16384'
   tune 200 bf16 rms_norm_decode "$DEC"; tune 60 f32 rms_norm "rows=2048,n=1024"
   (cd build-py && ctest -L gpu -j 8 > $OUT/ctest.txt 2>&1; tail -3 $OUT/ctest.txt; grep -E "\(Failed\)|Timeout" $OUT/ctest.txt)
   (cd bench && PYTHONPATH=../build-py/python timeout 60 python3 peers_grid.py ../.gl/exp/rms_norm_narrow.toml --dtype bf16 \
     --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/narrow-bf16.csv > $OUT/grid-bf16.txt 2>&1; tail -12 $OUT/grid-bf16.txt) ;;
esac
