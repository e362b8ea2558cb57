#!/usr/bin/env bash
# call2: conv1d re-tuned at the short grid shapes of batch 1 and 4 and the table's other shapes,
# both dtypes, with the sweep's new timing (one call per graph replay, L2 flushed); the
# delta_rule entries (the kernel's new guard); the GPU suite once; then, while the call has
# time, conv1d at the long grid shapes.
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
K=build-py/tools/kjit
SMALL='b=1,c=1024,t=64;b=1,c=1024,t=512;b=1,c=4096,t=64;b=1,c=4096,t=512;b=1,c=8192,t=64;b=1,c=8192,t=512;b=4,c=1024,t=64;b=4,c=1024,t=512;b=4,c=4096,t=64;b=4,c=4096,t=512;b=4,c=8192,t=64;b=4,c=8192,t=512;b=1,c=4096,t=4096;b=1,c=8192,t=4096;b=4,c=2048,t=2048;b=4,c=4096,t=2048;b=8,c=4096,t=1300'
LARGE='b=1,c=1024,t=2048;b=1,c=1024,t=8192;b=1,c=4096,t=2048;b=1,c=4096,t=8192;b=1,c=8192,t=2048;b=1,c=8192,t=8192;b=4,c=1024,t=2048;b=4,c=1024,t=8192;b=4,c=4096,t=8192;b=4,c=8192,t=2048;b=4,c=8192,t=8192'
for d in f32 bf16; do
  timeout 150 /usr/bin/time -f "tune conv1d $d SMALL %e s" $K tune conv1d --sweep kernel_src/conv1d.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --dtype $d --shapes "$SMALL" > $OUT/tune-conv1d-$d-SMALL.txt 2>&1; echo "rc $?"; tail -1 $OUT/tune-conv1d-$d-SMALL.txt
  cp kernel_src/tuned_h200.toml $OUT/; echo "elapsed $SECONDS s"
done
D128='b=1,h=16,dk=128,dv=128;b=1,h=32,dk=128,dv=128;b=1,h=64,dk=128,dv=128;b=4,h=16,dk=128,dv=128;b=4,h=32,dk=128,dv=128;b=4,h=64,dk=128,dv=128;b=8,h=16,dk=128,dv=128;b=16,h=16,dk=128,dv=128;b=16,h=32,dk=128,dv=128;b=16,h=64,dk=128,dv=128;b=32,h=16,dk=128,dv=128;b=32,h=32,dk=128,dv=128;b=32,h=64,dk=128,dv=128;b=64,h=16,dk=128,dv=128;b=64,h=32,dk=128,dv=128;b=64,h=64,dk=128,dv=128'
D64=$(echo "$D128" | sed 's/dk=128,dv=128/dk=64,dv=64/g; s/b=8,h=16,dk=64,dv=64;//')
if [ $SECONDS -lt 260 ]; then
  timeout 180 /usr/bin/time -f "tune dk128 %e s" $K tune delta_rule --sweep bench/tune/delta_rule.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$D128" > $OUT/tune-dr-dk128.txt 2>&1; echo "rc $?"; tail -1 $OUT/tune-dr-dk128.txt
  cp kernel_src/tuned_h200.toml $OUT/; echo "elapsed $SECONDS s"
fi
if [ $SECONDS -lt 400 ]; then
  timeout 130 /usr/bin/time -f "tune dk64 %e s" $K tune delta_rule --sweep bench/tune/delta_rule_dk64.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$D64" > $OUT/tune-dr-dk64.txt 2>&1; echo "rc $?"; tail -1 $OUT/tune-dr-dk64.txt
  cp kernel_src/tuned_h200.toml $OUT/; echo "elapsed $SECONDS s"
fi
if [ $SECONDS -lt 480 ]; then
  PY=$(command -v python3)
  mkdir -p /root/.pyenv/versions/3.12.1/bin
  for p in python3 python3.12; do
    w=/root/.pyenv/versions/3.12.1/bin/$p
    [ "$w" = "$PY" ] || { rm -f $w; printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > $w; chmod +x $w; }
  done
  python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
  (cd build-py && timeout 110 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-call2.txt 2>&1; grep -E "tests passed" $OUT/ctest-call2.txt; grep -E "\(Failed\)|Timeout|Not Run" $OUT/ctest-call2.txt; grep "Total Test time" $OUT/ctest-call2.txt)
fi
for d in f32 bf16; do
  [ $SECONDS -lt 520 ] || break
  timeout $((590 - SECONDS)) /usr/bin/time -f "tune conv1d $d LARGE %e s" $K tune conv1d --sweep kernel_src/conv1d.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --dtype $d --shapes "$LARGE" > $OUT/tune-conv1d-$d-LARGE.txt 2>&1; echo "rc $?"; tail -1 $OUT/tune-conv1d-$d-LARGE.txt
  cp kernel_src/tuned_h200.toml $OUT/; echo "elapsed $SECONDS s"
done
