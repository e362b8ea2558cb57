#!/usr/bin/env bash
# After call.sh (its test fix in place): on an H200, eager-2026-12-06/call1.sh. On an H100: the
# gpu suite twice, then the contract's defaults at two large bf16 shapes in three separate
# processes each (kjit bench, one process per run), to see how far the defaults' time moves
# between processes: the morning grid ran them as fast as ab.txt's tuned entries.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) exec bash bench/grids/results/eager-2026-12-06/call1.sh ;;
esac
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc
K=build-py/tools/kjit
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu2.txt
for i in 1 2; do
  (cd build-py && timeout 170 ctest -L gpu -j 8 > $OUT/ctest-fix-$i.txt 2>&1; echo "ctest $i rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-fix-$i.txt)")
done
for i in 1 2 3; do
  for s in b=32,c=8192,t=8192 b=4,c=8192,t=8192 b=1,c=8192,t=2048; do
    echo "== run $i $s"
    $K bench conv1d_cl --src kernel_src --dtype bf16 --shape $s --flush-l2 --graph --reps 25 -D CONV_SILU=1 2>&1 | grep -E "stats|floor"
  done
done > $OUT/defaults.txt
echo "defaults at $SECONDS s"
