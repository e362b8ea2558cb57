#!/usr/bin/env bash
# After the tuned table's same-arch stand-in (a GPU with no entry of a kernel and dtype takes
# the first other GPU's of its arch): on an H100, whose table holds only conv1d_cl entries, the
# gpu suite twice (cold cache, then warm), then the rms_norm grid in each dtype and the
# delta_rule grid against their peers with the H200's entries standing in (peers_grid.py
# --table, which looks entries up as start-up does). call1.sh ran the same grids with the
# contracts' defaults. On an H200: the eager A/B of eager-h200-2026-12-06/call.sh.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) exec bash bench/grids/results/eager-h200-2026-12-06/call.sh ;;
esac
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
cat $OUT/gpu.txt
for i in 1 2; do
  (cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$i.txt 2>&1
   echo "ctest $i rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-$i.txt)")
done
cd bench
for d in f32 bf16; do
  timeout -s INT 200 python3 peers_grid.py grids/rms_norm.toml --dtype $d --src ../kernel_src \
    --table ../kernel_src/tuned.toml --csv $OUT/rms-$d.csv > $OUT/rms-$d.txt 2>&1
  echo "rms $d rc $? at $SECONDS s"; tail -1 $OUT/rms-$d.txt | cut -c1-200
done
timeout -s INT $((590 - SECONDS)) python3 peers_grid.py grids/delta_rule.toml --src ../kernel_src \
  --table ../kernel_src/tuned.toml --csv $OUT/delta.csv > $OUT/delta.txt 2>&1
echo "delta rc $? at $SECONDS s"; tail -2 $OUT/delta.txt | cut -c1-200
