#!/usr/bin/env bash
# On an H200: eager-h200-2026-12-06/call.sh (the gpu suite and conv1d_cl's eager A/B).
# Elsewhere (an H100, where the table holds only conv1d_cl entries, so rms_norm and delta_rule
# run their contracts' defaults): the rms_norm grid in each dtype and the delta_rule grid
# against their peers (bench/peers_grid.py, the table as start-up reads it), each under a
# deadline.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) exec bash bench/grids/results/eager-h200-2026-12-06/call.sh ;;
esac
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
cat $OUT/gpu.txt
cd bench
for d in f32 bf16; do
  timeout -s INT 200 python3 peers_grid.py grids/rms_norm.toml --dtype $d --src ../kernel_src \
    --table ../kernel_src/tuned.toml --csv $OUT/rms-$d.csv > $OUT/rms-$d.txt 2>&1
  echo "rms $d rc $? at $SECONDS s"; tail -2 $OUT/rms-$d.txt | cut -c1-200
done
timeout -s INT $((560 - SECONDS)) python3 peers_grid.py grids/delta_rule.toml --src ../kernel_src \
  --table ../kernel_src/tuned.toml --csv $OUT/delta.csv > $OUT/delta.txt 2>&1
echo "delta rc $? at $SECONDS s"; tail -3 $OUT/delta.txt | cut -c1-200
