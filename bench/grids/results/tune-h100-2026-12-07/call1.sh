#!/usr/bin/env bash
# On an H100: the gpu suite twice at the tree it is run from, then whether H100 entries close the
# channel-first conv1d misses of h100-2026-12-07/call3 (f32, b=1, t <= 512, where the H200's
# entries stand in): `kjit tune conv1d` at those 6 shapes into a copy of the table, then the
# 18 grid points of those shapes with the shipped table and with the copy, A B B A (each run
# times kjit against causal-conv1d in one process). Then conv1d_update tuned on the H100 at
# the 16 shapes of its grid in each dtype, and its grid with the copy.
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
K=$PWD/build-py/tools/kjit
T=$OUT/table.toml
cp kernel_src/tuned.toml $T
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t stdbuf -oL $K tune "$@" --table $T --src kernel_src > $OUT/tune-$l.txt 2>&1
  echo "tune $l rc $? at $SECONDS s: $(tail -n 1 $OUT/tune-$l.txt | cut -c1-160)"
}
S="b=1,c=1024,t=64;b=1,c=4096,t=64;b=1,c=8192,t=64;b=1,c=1024,t=512;b=1,c=4096,t=512;b=1,c=8192,t=512"
tune conv1d-f32 150 conv1d --sweep kernel_src/conv1d.sweep.toml --dtype f32 --shapes "$S"
cat > /tmp/small.toml <<'G'
kernel = "conv1d"
dtypes = ["f32"]
b = [1]
c = [1024, 4096, 8192]
t = [64, 512]
forms = ["bias+silu", "silu", "none"]
G
cd bench
n=0
for arm in shipped h100 h100 shipped; do
  n=$((n + 1)); tab=../kernel_src/tuned.toml; [ $arm = h100 ] && tab=$T
  timeout -s INT 50 python3 peers_grid.py /tmp/small.toml --dtype f32 --src ../kernel_src \
    --table $tab --csv $OUT/small-$n-$arm.csv > $OUT/small-$n-$arm.txt 2>&1
  echo "small $n $arm rc $? at $SECONDS s"; tail -1 $OUT/small-$n-$arm.txt | cut -c1-200
done
cd ..
U="";for b in 1 4 16 64; do for c in 1024 2048 4096 8192; do U="$U;b=$b,c=$c"; done; done; U=${U#;}
for d in f32 bf16; do
  tune update-$d 60 conv1d_update --sweep kernel_src/conv1d_update.sweep.toml --dtype $d --shapes "$U"
done
cd bench
[ $SECONDS -lt 420 ] && timeout -s INT $((480 - SECONDS)) python3 peers_grid.py grids/conv1d_update.toml --src ../kernel_src \
  --table $T --csv $OUT/update-h100.csv > $OUT/update-h100.txt 2>&1
echo "update rc $? at $SECONDS s"; tail -2 $OUT/update-h100.txt | cut -c1-200
