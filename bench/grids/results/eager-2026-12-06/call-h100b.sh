#!/usr/bin/env bash
# On the H100 of call-h100.sh, tuning on into its scratch table (h100-scratch.toml: call-h100.sh's
# $OUT/scratch.toml, with the 17 small bf16 shapes): the small f32 shapes, the large bf16 and f32
# ones, then the channel-last grids with that table. The H100 entries of both calls are in
# kernel_src/tuned.toml now, so a re-run starts from that table.
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit D=bench/grids/results/eager-2026-12-06 T=$OUT/scratch.toml
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
cp kernel_src/tuned.toml $T
. $D/tune.sh
tune f32-small small f32 80
tune bf16-large large bf16 300
tune f32-large large f32 340
for dt in bf16 f32; do
  (cd bench && timeout -s INT 110 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype $dt \
     --table $T --csv $OUT/grid-$dt.csv > $OUT/grid-$dt.txt 2>&1)
  echo "grid $dt at $SECONDS s: $(grep summary $OUT/grid-$dt.txt)"
done
