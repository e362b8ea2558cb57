#!/usr/bin/env bash
# call13.sh: the compiled-in width's short final sum and skipped first barrier (kernel_src) against
# the source before it (.gl/exp/srcM) at the table's decode entries (ab.py: bits compared, 32 calls
# per graph, A B B A); the GPU suite; the decode rows re-tuned on the new source.
set -u
bash scripts/on_device.sh && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
cp kernel_src/tuned_h200.toml /tmp/tuned.orig
PYTHONPATH=build-py/python timeout 200 python3 .gl/exp/ab.py .gl/exp/srcM kernel_src bf16,f32 - 1 > $OUT/ab.txt 2>&1; tail -22 $OUT/ab.txt
(cd build-py && timeout 150 ctest -L gpu -j 8 > $OUT/ctest-1.txt 2>&1; tail -3 $OUT/ctest-1.txt; grep -E "\(Failed\)|Timeout" $OUT/ctest-1.txt)
DEC='rows=1,n=1024;rows=32,n=1024;rows=1,n=2048;rows=32,n=2048;rows=1,n=4096;rows=32,n=4096;rows=1,n=7168;rows=32,n=7168;rows=1,n=8192;rows=32,n=8192;rows=1,n=16384;rows=32,n=16384'
for d in f32 bf16; do
  timeout 120 /usr/bin/time -f "tune $d %e s" build-py/tools/kjit tune rms_norm --sweep bench/tune/rms_norm_decode_graph.sweep.toml --dtype $d \
    --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$DEC" > $OUT/tune-$d.txt 2>&1; tail -1 $OUT/tune-$d.txt
done
cp kernel_src/tuned_h200.toml $OUT/
