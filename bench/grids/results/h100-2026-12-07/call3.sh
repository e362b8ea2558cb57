#!/usr/bin/env bash
# Ran on an H100 at fb3b315 (results in call3/, bench/RESULTS.md "2026-12-07 (night)"): the gpu
# suite, twice, at the tree it is run from (the checks that came after call2.sh's run), then the channel-first conv1d grid in each dtype and the conv1d_update
# grid against causal-conv1d, the H200's entries standing in (the H100 has none of conv1d or
# conv1d_update). Compare with a run that passes a table without the stand-in's source (e.g. a
# copy of kernel_src/tuned.toml holding only the H100's entries) to see what the stand-in gives.
# On an H200: the eager A/B of eager-h200-2026-12-06/call.sh.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) exec bash bench/grids/results/eager-h200-2026-12-06/call.sh ;;
esac
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
cat $OUT/gpu.txt
# Twice: the gpu suite has failed some runs and passed others under -j.
for n in 1 2; do
  (cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$n.txt 2>&1
   echo "ctest $n rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-$n.txt)")
done
cd bench
for d in f32 bf16; do
  timeout -s INT 150 python3 peers_grid.py grids/conv1d.toml --dtype $d --src ../kernel_src \
    --table ../kernel_src/tuned.toml --csv $OUT/conv1d-$d.csv > $OUT/conv1d-$d.txt 2>&1
  echo "conv1d $d rc $? at $SECONDS s"; tail -1 $OUT/conv1d-$d.txt | cut -c1-200
done
timeout -s INT $((590 - SECONDS)) python3 peers_grid.py grids/conv1d_update.toml --src ../kernel_src \
  --table ../kernel_src/tuned.toml --csv $OUT/update.csv > $OUT/update.txt 2>&1
echo "update rc $? at $SECONDS s"; tail -2 $OUT/update.txt | cut -c1-200
