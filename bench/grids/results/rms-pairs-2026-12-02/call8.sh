#!/usr/bin/env bash
# call8.sh MODE: rms_norm with the one-row cached path folded into the warp row groups and the bf16
# pair conversion in every form. MODE 1: A B B A of the new source (kernel_src) against the old
# (.gl/exp/src_prev) at the tuned entries of a few shapes, the GPU suite, re-tune bf16 (main sweep).
# MODE 2: re-tune fp32 (main sweep) and bf16 (decode sweep). MODE 3: fp32 decode sweep, peers grids.
set -u
bash scripts/on_device.sh && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
cp kernel_src/tuned_h200.toml /tmp/tuned.orig
MAIN='rows=2048,n=1024;rows=8192,n=1024;rows=16384,n=1024;rows=32768,n=1024;rows=2048,n=2048;rows=8192,n=2048;rows=16384,n=2048;rows=32768,n=2048;rows=2048,n=4096;rows=8192,n=4096;rows=16384,n=4096;rows=32768,n=4096;rows=2048,n=7168;rows=8192,n=7168;rows=16384,n=7168;rows=32768,n=7168;rows=2048,n=8192;rows=8192,n=8192;rows=16384,n=8192;rows=32768,n=8192;rows=2048,n=16384;rows=8192,n=16384;rows=16384,n=16384;rows=32768,n=16384'
DEC='rows=1,n=1024;rows=32,n=1024;rows=256,n=1024;rows=1,n=2048;rows=32,n=2048;rows=256,n=2048;rows=1,n=4096;rows=32,n=4096;rows=256,n=4096;rows=1,n=7168;rows=32,n=7168;rows=256,n=7168;rows=1,n=8192;rows=32,n=8192;rows=256,n=8192;rows=1,n=16384;rows=32,n=16384;rows=256,n=16384'
tune() { # dtype sweep shapes
  /usr/bin/time -f "tune $1 $2 %e s" build-py/tools/kjit tune rms_norm --sweep bench/tune/$2.sweep.toml --dtype $1 \
    --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$3" > $OUT/tune-$1-$2.txt 2>&1
  tail -1 $OUT/tune-$1-$2.txt; grep -c "recorded in" $OUT/tune-$1-$2.txt
}
suite() { (cd build-py && ctest -L gpu -j 8 > $OUT/ctest-$1.txt 2>&1; tail -3 $OUT/ctest-$1.txt; grep -E "\(Failed\)|Timeout" $OUT/ctest-$1.txt); }
case $1 in
1)
mkdir -p /tmp/ab
# dtype rows n and the tuned entry's defines (as of the old source)
for spec in "bf16 32768 1024 128 4 2" "bf16 8192 1024 1024 4 2" "bf16 16384 4096 128 4 0" "bf16 8192 7168 128 8 0" \
            "bf16 2048 2048 64 4 1" "f32 16384 4096 128 8 0" "f32 2048 1024 128 16 1" "f32 8192 7168 512 4 0"; do set -- $spec
cat > /tmp/ab/p.toml <<T
kernel = "rms_norm"
dtype = "$1"
[shape]
rows = $2
n = $3
[defines]
RMS_WIDTH = 1024
RMS_CACHE = $5
RMS_WARP_ROWS = $6
[sweep]
RMS_BLOCK = [$4]
[check]
mode = "digest"
baseline = { RMS_BLOCK = $4 }
[bench]
warmup = 5
reps = 50
flush_l2 = true
T
for arm in new prev prev new; do src=kernel_src; [ $arm = prev ] && src=.gl/exp/src_prev
  echo "== $arm $spec" >> $OUT/ab.txt; build-py/tools/kjit sweep --no-cache /tmp/ab/p.toml --src $src --out /tmp/ab/o > /tmp/ab/s.txt 2>&1
  grep -E "RMS_BLOCK=|error" /tmp/ab/s.txt | sed -E 's/ +/ /g' >> $OUT/ab.txt; done
done
suite 1
tune bf16 rms_norm "$MAIN" ;;
2)
tune f32 rms_norm "$MAIN"
tune bf16 rms_norm_decode "$DEC" ;;
3)
tune f32 rms_norm_decode "$DEC"
(cd bench && for d in bf16 f32; do PYTHONPATH=../build-py/python /usr/bin/time -f "grid $d %e s" python3 peers_grid.py grids/rms_norm.toml --dtype $d \
   --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/rms_norm-$d.csv > $OUT/grid-$d.txt 2>&1; tail -4 $OUT/grid-$d.txt; done)
suite 3 ;;
esac
diff -u /tmp/tuned.orig kernel_src/tuned_h200.toml > $OUT/tuned.diff
