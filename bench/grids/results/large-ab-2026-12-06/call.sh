#!/usr/bin/env bash
# On an H200: eager-2026-12-06/call1.sh (the gpu suite once, conv1d_cl's tunes with the eager
# axis). On an H100: the gpu suite twice, the one large bf16 shape the H100 tune did not reach
# (b=32 c=8192 t=8192) into the table, then ab.py: every large H100 conv1d_cl entry against the
# contract's defaults in one process.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) exec bash bench/grids/results/eager-2026-12-06/call1.sh ;;
esac
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench
K=build-py/tools/kjit T=$PWD/kernel_src/tuned.toml D=bench/grids/results/large-ab-2026-12-06
gpu=$(nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader); echo "$gpu" > $OUT/gpu.txt
for i in 1 2; do
  (cd build-py && timeout 170 ctest -L gpu -j 8 > $OUT/ctest-$i.txt 2>&1; echo "ctest $i rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-$i.txt)")
done
. bench/grids/results/eager-2026-12-06/tune.sh
tune rest large bf16 420
timeout -s INT $((590 - SECONDS)) python3 $D/ab.py $T "${gpu%%,*}" > $OUT/ab.txt 2>&1
echo "ab rc $? at $SECONDS s: $(grep -c '^==' $OUT/ab.txt) shapes"
