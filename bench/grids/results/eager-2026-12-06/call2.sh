#!/usr/bin/env bash
# After call 1's tunes (its table copied into kernel_src/tuned.toml): the f32 large shapes
# and any shapes call 1 did not reach, the channel-last grids in both dtypes against
# causal-conv1d, then the gpu suite twice more.
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit T=$PWD/kernel_src/tuned.toml D=bench/grids/results/eager-2026-12-06
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu2.txt
case "$(cat $OUT/gpu2.txt)" in *H200*) ;; *) cp $T $OUT/scratch.toml; T=$OUT/scratch.toml ;; esac
. $D/tune.sh
[ -s $D/shapes-rest.txt ] && tune rest large bf16 150
tune f32-large large f32 200
for dt in bf16 f32; do
  (cd bench && timeout -s INT 100 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype $dt \
     --table $T --csv $OUT/grid-$dt.csv > $OUT/grid-$dt.txt 2>&1)
  echo "grid $dt at $SECONDS s: $(grep summary $OUT/grid-$dt.txt)"
done
cd build-py
for i in 2 3; do
  timeout 150 ctest -L gpu -j 8 > $OUT/ctest-$i.txt 2>&1; echo "ctest $i rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-$i.txt)"
done
