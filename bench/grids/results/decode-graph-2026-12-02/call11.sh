#!/usr/bin/env bash
# call11.sh MODE. MODE 1: the GPU suite; re-tune the decode rows (1 and 32 x every grid width, both
# dtypes) with bench/tune/rms_norm_decode_graph.sweep.toml (32 calls per graph, per call, RMS_N
# over 0 and n); re-sweep f32 256 x 16384's width entry (the scale's rounding fix changed its
# code). MODE 2: A B B A of the previous table's decode picks against the new ones
# (.gl/exp/abba11.txt); the peers grids with the new table; the GPU suite again.
set -u
bash scripts/on_device.sh && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
cp kernel_src/tuned_h200.toml /tmp/tuned.orig
DEC='rows=1,n=1024;rows=32,n=1024;rows=1,n=2048;rows=32,n=2048;rows=1,n=4096;rows=32,n=4096;rows=1,n=7168;rows=32,n=7168;rows=1,n=8192;rows=32,n=8192;rows=1,n=16384;rows=32,n=16384'
tune() { # dtype sweep shapes
  timeout 240 /usr/bin/time -f "tune $1 $2 %e s" build-py/tools/kjit tune rms_norm --sweep bench/tune/$2.sweep.toml --dtype $1 \
    --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$3" > $OUT/tune-$1-$2.txt 2>&1
  tail -1 $OUT/tune-$1-$2.txt; grep -c "recorded in" $OUT/tune-$1-$2.txt; cp kernel_src/tuned_h200.toml $OUT/
}
suite() { (cd build-py && timeout 150 ctest -L gpu -j 8 > $OUT/ctest-$1.txt 2>&1; tail -3 $OUT/ctest-$1.txt; grep -E "\(Failed\)|Timeout" $OUT/ctest-$1.txt); }
case $1 in
1)
suite 1
tune f32 rms_norm_decode_graph "$DEC"
tune bf16 rms_norm_decode_graph "$DEC"
timeout 60 build-py/tools/kjit sweep bench/tune/rms_norm_width/f32-256x16384.sweep.toml --src kernel_src \
  --record kernel_src/tuned_h200.toml --out /tmp/w > $OUT/width-f32-256x16384.txt 2>&1; tail -3 $OUT/width-f32-256x16384.txt
cp kernel_src/tuned_h200.toml $OUT/ ;;
2)
# The previous table's decode picks (A) against the new ones (B), in one process each: 32 calls per
# graph (per call, warm), and one call with the L2 flushed (the figure the previous picks were tuned by).
while read -r dt shape rest; do
  for mode in "--graph --calls 32" "--flush-l2"; do
    echo "== $dt $shape $mode" >> $OUT/abba.txt
    timeout 30 build-py/tools/kjit bench rms_norm --src kernel_src --dtype $dt --shape $shape $rest $mode --pairs 5 --reps 30 --warmup 5 >> $OUT/abba.txt 2>&1
  done
done < .gl/exp/abba11.txt
grep -cE "^== " $OUT/abba.txt
(cd bench && for d in bf16 f32; do PYTHONPATH=../build-py/python /usr/bin/time -f "grid $d %e s" python3 peers_grid.py grids/rms_norm.toml --dtype $d \
   --src ../kernel_src --table ../kernel_src/tuned_h200.toml --csv $OUT/rms_norm-$d.csv > $OUT/grid-$d.txt 2>&1; tail -4 $OUT/grid-$d.txt; done)
suite 2 ;;
esac
diff -u /tmp/tuned.orig kernel_src/tuned_h200.toml > $OUT/tuned.diff
