#!/usr/bin/env bash
# conv1d_cl bf16: tune the 16 small grid points that miss with channels per thread as an axis
# (bench/tune/conv1d_cl_small.sweep.toml), ncu stall reasons of both dtypes at one small configuration, tune
# the 9 large points left, then the bf16 grid with the table.
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
T=kernel_src/tuned_h200.toml
timeout 150 stdbuf -oL $K tune conv1d_cl --sweep bench/tune/conv1d_cl_small.sweep.toml --dtype bf16 \
    --shapes "$(cat bench/grids/results/wvec-2026-12-05/shapes-bf16-small-miss.txt)" --table $T --src kernel_src > $OUT/tune-small-bf16.txt 2>&1
echo "tune small rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-small-bf16.txt) recorded"
cp $T $OUT/tuned-after-small.toml
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
for d in f32 bf16; do
  timeout 25 $NCU --clock-control none --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__cycles_active.avg,gpu__time_duration.sum' \
    -k regex:conv1d_cl -c 1 $K bench conv1d_cl --src kernel_src --shape b=1,c=1024,t=64 --dtype $d -D CONV_CL_STEPS=2 -D CONV_BLOCK=32 --warmup 1 --reps 1 > $OUT/ncu-stall-$d.txt 2>&1
  echo "ncu $d rc $? at $SECONDS s"
done
timeout $((530 - SECONDS)) stdbuf -oL $K tune conv1d_cl --sweep kernel_src/conv1d_cl.sweep.toml --dtype bf16 \
    --shapes "$(cat bench/grids/results/wvec-2026-12-05/shapes-bf16-large9.txt)" --table $T --src kernel_src > $OUT/tune-large-bf16.txt 2>&1
echo "tune large rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-large-bf16.txt) recorded"
cp $T $OUT/
(cd bench && timeout -s INT 40 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype bf16 \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/grid-bf16.csv > $OUT/grid-bf16.txt 2>&1; echo "grid at $SECONDS s: $(grep summary $OUT/grid-bf16.txt)")
