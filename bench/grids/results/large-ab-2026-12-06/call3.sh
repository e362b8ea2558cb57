#!/usr/bin/env bash
# On an H200: eager-2026-12-06/call1.sh. On an H100: ab_eager.py in both dtypes, whether the
# eager loads should be conv1d_cl's default where the table has no entry.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) exec bash bench/grids/results/eager-2026-12-06/call1.sh ;;
esac
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc
D=bench/grids/results/large-ab-2026-12-06
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu3.txt
timeout 280 python3 $D/ab_eager.py bf16 > $OUT/ab-eager-bf16.txt 2>&1; echo "bf16 at $SECONDS s: $(grep -c '^==' $OUT/ab-eager-bf16.txt)"
timeout $((560 - SECONDS)) python3 $D/ab_eager.py f32 > $OUT/ab-eager-f32.txt 2>&1; echo "f32 at $SECONDS s: $(grep -c '^==' $OUT/ab-eager-f32.txt)"
