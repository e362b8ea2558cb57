#!/usr/bin/env bash
# call4: call3's two re-tunes again (its table did not come back: a call returns at most 8
# files), then the GPU suite with that table; everything back as one tar.
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python
K=build-py/tools/kjit
mkdir -p /tmp/o
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t /usr/bin/time -f "tune $l %e s" $K tune "$@" --table kernel_src/tuned_h200.toml --src kernel_src > /tmp/o/tune-$l.txt 2>&1
  echo "$l rc $? at $SECONDS s: $(tail -n 1 /tmp/o/tune-$l.txt)"
  cp kernel_src/tuned_h200.toml /tmp/o/table-$l.toml
}
tune dr-b64h64 100 delta_rule --sweep bench/tune/delta_rule.sweep.toml --shapes 'b=64,h=64,dk=128,dv=128'
tune conv-f32-large 150 conv1d --sweep kernel_src/conv1d.sweep.toml --dtype f32 \
  --shapes 'b=1,c=1024,t=2048;b=1,c=1024,t=8192;b=1,c=4096,t=2048;b=1,c=4096,t=8192;b=1,c=8192,t=2048;b=1,c=8192,t=8192;b=4,c=1024,t=2048;b=4,c=1024,t=8192'
(cd build-py && timeout 100 ctest -L gpu -j 8 --output-on-failure > /tmp/o/ctest-3.txt 2>&1; grep -E "tests passed" /tmp/o/ctest-3.txt; grep -E "\(Failed\)|Timeout|Not Run" /tmp/o/ctest-3.txt)
tar -C /tmp/o -czf $OUT/call4.tgz .
echo "done at $SECONDS s"
