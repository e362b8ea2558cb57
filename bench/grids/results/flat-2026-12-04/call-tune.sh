#!/usr/bin/env bash
# conv1d's segments cut from the rows laid end to end (CONV_FLAT): the GPU suite with its new
# bit test, then the entries at t = 64 and 512 and the new b = 32 entries tuned with the shipped
# sweep (CONV_FLAT = 0 and 1 side by side), bf16 then fp32. The table is copied to $OUT after
# each tune (a device call starts from the local copy).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-1.txt 2>&1; grep -E "tests passed" $OUT/ctest-1.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-1.txt; grep "Total Test time" $OUT/ctest-1.txt)
S=""
for b in 32 1 4; do for t in 64 512; do for c in 1024 4096 8192; do S="$S;b=$b,c=$c,t=$t"; done; done; done
for c in 1024 4096 8192; do S="$S;b=32,c=$c,t=2048"; done
S=${S#;}
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t /usr/bin/time -f "tune $l %e s" $K tune "$@" --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-$l.txt 2>&1
  echo "$l rc $? at $SECONDS s: $(tail -n 1 $OUT/tune-$l.txt)"
  cp kernel_src/tuned_h200.toml $OUT/table.toml
}
tune conv-bf16 $((380 - SECONDS)) conv1d --sweep kernel_src/conv1d.sweep.toml --dtype bf16 --shapes "$S"
tune conv-f32 $((590 - SECONDS)) conv1d --sweep kernel_src/conv1d.sweep.toml --dtype f32 --shapes "$S"
echo "done at $SECONDS s"
