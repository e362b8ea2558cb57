#!/usr/bin/env bash
# On an H200: the gpu suite, then conv1d_cl's defaults without and with the eager first-tile
# loads (CONV_CL_EAGER, the default since 112cf3f) at every shape of the channel-last grid,
# bf16 then f32, one A B B A process per shape (large-ab-2026-12-06/ab_eager.py), each dtype
# under a deadline: whether the default suits the H200, where 28 of the grid's 72 points have no
# table entry. END (default 575) is the last second of the f32 deadline; bf16's is at 60 %.
# On an H100: eager-2026-12-06/call-h100c.sh.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) ;;
  *) exec bash bench/grids/results/eager-2026-12-06/call-h100c.sh ;;
esac
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
(cd build-py && timeout 150 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-1.txt 2>&1; echo "ctest 1 rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-1.txt)")
A=bench/grids/results/large-ab-2026-12-06/ab_eager.py
END=${END:-575}
timeout -s INT $((END * 6 / 10 - SECONDS)) python3 $A bf16 > $OUT/ab-eager-bf16.txt 2>&1; echo "bf16 at $SECONDS s: $(grep -c '^==' $OUT/ab-eager-bf16.txt)"
timeout -s INT $((END - SECONDS)) python3 $A f32 > $OUT/ab-eager-f32.txt 2>&1; echo "f32 at $SECONDS s: $(grep -c '^==' $OUT/ab-eager-f32.txt)"
