#!/usr/bin/env bash
# conv1d_cl grid: candidate defaults for the untuned shapes (tuned shapes take the table).
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
cd bench
run() { # name dtype L S
  timeout -s INT 105 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype $2 \
    --table ../kernel_src/tuned_h200.toml -D CONV_CL_STEPS=$3 -D CONV_CL_SEGS=$4 --csv $OUT/$1.csv > $OUT/$1.txt 2>&1
  echo "$1 rc $? at $SECONDS s: $(grep summary $OUT/$1.txt)"
}
run bf16-L16S2 bf16 16 2
run bf16-L16S1 bf16 16 1
run bf16-L8S2 bf16 8 2
run f32-L16S2 f32 16 2
run f32-L16S1 f32 16 1
