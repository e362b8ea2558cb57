#!/usr/bin/env bash
# Re-tune every conv1d entry with the kernel whose warps walk across rows (the shipped sweep,
# both dtypes), then the conv1d grid with the new table. The table is copied to $OUT after each
# tune (a device call starts from the local copy).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
K=build-py/tools/kjit
BF16='b=1,c=1024,t=64;b=1,c=1024,t=512;b=1,c=1024,t=2048;b=1,c=1024,t=8192;b=1,c=4096,t=64;b=1,c=4096,t=512;b=1,c=4096,t=2048;b=1,c=4096,t=4096;b=1,c=4096,t=8192;b=1,c=8192,t=64;b=1,c=8192,t=512;b=1,c=8192,t=2048;b=1,c=8192,t=4096;b=1,c=8192,t=8192;b=4,c=1024,t=64;b=4,c=1024,t=512;b=4,c=1024,t=2048;b=4,c=1024,t=8192;b=4,c=2048,t=2048;b=4,c=4096,t=64;b=4,c=4096,t=512;b=4,c=4096,t=2048;b=4,c=4096,t=8192;b=4,c=8192,t=64;b=4,c=8192,t=512;b=4,c=8192,t=2048;b=4,c=8192,t=8192;b=8,c=4096,t=1300'
F32=$(echo "$BF16" | sed 's/;b=4,c=4096,t=8192;/;/; s/;b=4,c=8192,t=2048;b=4,c=8192,t=8192;/;/')
tune() { # label, timeout, args...
  local l=$1 t=$2; shift 2
  timeout $t /usr/bin/time -f "tune $l %e s" $K tune "$@" --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-$l.txt 2>&1
  echo "$l rc $? at $SECONDS s: $(tail -n 1 $OUT/tune-$l.txt)"
  cp kernel_src/tuned_h200.toml $OUT/table.toml
}
tune conv-bf16 280 conv1d --sweep kernel_src/conv1d.sweep.toml --dtype bf16 --shapes "$BF16"
tune conv-f32 $((480 - SECONDS)) conv1d --sweep kernel_src/conv1d.sweep.toml --dtype f32 --shapes "$F32"
(cd bench && timeout -s INT $((585 - SECONDS)) python3 peers_grid.py grids/conv1d.toml --src ../kernel_src \
   --table ../kernel_src/tuned_h200.toml --csv $OUT/conv1d.csv > $OUT/grid-conv1d.txt 2>&1; grep summary $OUT/grid-conv1d.txt)
echo "done at $SECONDS s"
