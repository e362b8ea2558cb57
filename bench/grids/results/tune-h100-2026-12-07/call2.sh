#!/usr/bin/env bash
# On an H100: the gpu suite once at the tree it is run from, then conv1d_update tuned at the 16 shapes of its grid in each dtype into a copy of the
# table (call1's copy did not come back), then its grid with the shipped table (the H200's
# entries standing in) and with the copy, A B B A, each run kjit against causal-conv1d in one
# process. Everything is packed into one file: a call returns few files.
# On an H200: the gpu suite and the eager A/B of eager-h200-2026-12-06/call.sh, cut at 300 s.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) END=300 exec bash bench/grids/results/eager-h200-2026-12-06/call.sh ;;
esac
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
R=/tmp/r && mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $R/gpu.txt
cat $R/gpu.txt
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $R/ctest-1.txt 2>&1
 echo "ctest 1 rc $? at $SECONDS s: $(grep 'tests passed' $R/ctest-1.txt)")
T=$R/table.toml
cp kernel_src/tuned.toml $T
U="";for b in 1 4 16 64; do for c in 1024 2048 4096 8192; do U="$U;b=$b,c=$c"; done; done; U=${U#;}
for d in f32 bf16; do
  timeout 90 stdbuf -oL build-py/tools/kjit tune conv1d_update --sweep kernel_src/conv1d_update.sweep.toml \
    --dtype $d --shapes "$U" --table $T --src kernel_src > $R/tune-update-$d.txt 2>&1
  echo "tune $d rc $? at $SECONDS s: $(grep -c recorded $R/tune-update-$d.txt) recorded"
done
cd bench
n=0
for arm in shipped h100 h100 shipped; do
  n=$((n + 1)); tab=../kernel_src/tuned.toml; [ $arm = h100 ] && tab=$T
  [ $SECONDS -lt 390 ] && timeout -s INT 40 python3 peers_grid.py grids/conv1d_update.toml --src ../kernel_src \
    --table $tab --csv $R/update-$n-$arm.csv > $R/update-$n-$arm.txt 2>&1
  echo "update $n $arm rc $? at $SECONDS s"; tail -2 $R/update-$n-$arm.txt | cut -c1-200
done
tar -C $R -czf $OUT/call2.tar.gz . && ls -l $OUT
