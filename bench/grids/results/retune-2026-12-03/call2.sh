#!/usr/bin/env bash
# call2: re-tune with the new sources: delta_rule (the column sums outside the live test, the
# width guard inside the run-time path) at its 31 shapes; conv1d (a shift and a mask for
# power-of-two splits) at its short-row shapes of both dtypes and the long bf16 ones. The table
# is copied to $OUT after each tune (a device call starts from the local copy).
set -u
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc
K=build-py/tools/kjit
D128='b=1,h=16,dk=128,dv=128;b=1,h=32,dk=128,dv=128;b=1,h=64,dk=128,dv=128;b=4,h=16,dk=128,dv=128;b=4,h=32,dk=128,dv=128;b=4,h=64,dk=128,dv=128;b=8,h=16,dk=128,dv=128;b=16,h=16,dk=128,dv=128;b=16,h=32,dk=128,dv=128;b=16,h=64,dk=128,dv=128;b=32,h=16,dk=128,dv=128;b=32,h=32,dk=128,dv=128;b=32,h=64,dk=128,dv=128;b=64,h=16,dk=128,dv=128;b=64,h=32,dk=128,dv=128;b=64,h=64,dk=128,dv=128'
D64=$(echo "$D128" | sed 's/dk=128,dv=128/dk=64,dv=64/g; s/b=8,h=16,dk=64,dv=64;//')
SMALL='b=1,c=1024,t=64;b=1,c=4096,t=64;b=4,c=1024,t=64;b=1,c=1024,t=512;b=1,c=8192,t=64;b=4,c=4096,t=64;b=1,c=4096,t=512;b=4,c=1024,t=512;b=4,c=8192,t=64;b=1,c=8192,t=512;b=4,c=4096,t=512;b=4,c=8192,t=512;b=1,c=4096,t=4096;b=1,c=8192,t=4096;b=4,c=2048,t=2048;b=4,c=4096,t=2048;b=8,c=4096,t=1300'
LARGE='b=1,c=1024,t=2048;b=1,c=1024,t=8192;b=1,c=4096,t=2048;b=1,c=4096,t=8192;b=1,c=8192,t=2048;b=1,c=8192,t=8192;b=4,c=1024,t=2048;b=4,c=1024,t=8192;b=4,c=4096,t=8192;b=4,c=8192,t=2048;b=4,c=8192,t=8192'
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t /usr/bin/time -f "tune $l %e s" $K tune "$@" --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-$l.txt 2>&1
  echo "$l rc $? at $SECONDS s: $(tail -n 1 $OUT/tune-$l.txt)"
  cp kernel_src/tuned_h200.toml $OUT/table-$l.toml
}
tune dr128 150 delta_rule --sweep bench/tune/delta_rule.sweep.toml --shapes "$D128"
tune dr64 100 delta_rule --sweep bench/tune/delta_rule_dk64.sweep.toml --shapes "$D64"
tune conv-f32-small 120 conv1d --sweep kernel_src/conv1d.sweep.toml --dtype f32 --shapes "$SMALL"
tune conv-bf16-small 90 conv1d --sweep kernel_src/conv1d.sweep.toml --dtype bf16 --shapes "$SMALL"
tune conv-bf16-large $((590 - SECONDS)) conv1d --sweep kernel_src/conv1d.sweep.toml --dtype bf16 --shapes "$LARGE"
