#!/usr/bin/env bash
# conv1d_cl: tune the 12 large bf16 grid points into the table and run the bf16 grid; then an
# ABBA of vector weight/bias loads (CONV_CL_WVEC, a scratch copy of the source) in both dtypes,
# and ncu of the two dtypes at one small configuration.
# Set-up: scripts/carry.sh build-py; carry .carry, .gl/exp (the scratch source .gl/exp/wvec =
# kernel_src with ../segs-2026-12-05/wvec.patch applied, and ../segs-2026-12-05/shapes-bf16-large.txt)
# and .gl/whl (the peer wheels).
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest.txt 2>&1; echo "ctest rc $? at $SECONDS s"; grep -E "tests passed|Failed|Timeout" $OUT/ctest.txt)
K=build-py/tools/kjit
timeout 70 stdbuf -oL $K tune conv1d_cl --sweep kernel_src/conv1d_cl.sweep.toml --dtype bf16 \
    --shapes "$(cat .gl/exp/shapes-bf16-large.txt)" --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-large-bf16.txt 2>&1
echo "tune rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-large-bf16.txt) recorded"
cp kernel_src/tuned_h200.toml $OUT/
(cd bench && timeout -s INT 40 python3 peers_grid.py grids/conv1d_cl.toml --src ../kernel_src --dtype bf16 \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/grid-bf16.csv > $OUT/grid-bf16.txt 2>&1; echo "grid at $SECONDS s: $(grep summary $OUT/grid-bf16.txt)")
B="--graph --calls 32 --flush-l2 --reps 20 --pairs 3"
for s in "b=1,c=1024,t=64 -D CONV_CL_STEPS=2 -D CONV_BLOCK=32" "b=4,c=4096,t=512 -D CONV_CL_STEPS=16 -D CONV_BLOCK=64"; do
  for d in f32 bf16; do
    echo "== $d $s" >> $OUT/bench.txt
    timeout 15 $K bench conv1d_cl --src .gl/exp/wvec --shape $s --dtype $d --vs CONV_CL_WVEC=1 $B >> $OUT/bench.txt 2>&1
  done
done
echo "bench done at $SECONDS s"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
for d in f32 bf16; do
  timeout 25 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section LaunchStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    -k regex:conv1d_cl -c 2 $K bench conv1d_cl --src kernel_src --shape b=1,c=1024,t=64 --dtype $d -D CONV_CL_STEPS=2 -D CONV_BLOCK=32 --warmup 1 --reps 1 > $OUT/ncu-$d.txt 2>&1
  echo "ncu $d rc $? at $SECONDS s"
done
