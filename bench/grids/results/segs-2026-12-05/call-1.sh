#!/usr/bin/env bash
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
(cd build-py && timeout 200 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest1.txt 2>&1; echo "rc $?" >> $OUT/ctest1.txt)
for d in bf16 f32; do
  /usr/bin/time -v -o $OUT/time-$d.txt timeout 130 stdbuf -oL build-py/tools/kjit tune conv1d_cl --sweep kernel_src/conv1d_cl.sweep.toml --dtype $d --shapes "b=8,c=4096,t=1300;b=1,c=8192,t=512;b=32,c=4096,t=64;b=4,c=4096,t=2048" --table kernel_src/tuned_h200.toml --src kernel_src > $OUT/tune-cl-$d.txt 2>&1
  echo "rc $?" >> $OUT/tune-cl-$d.txt
done
cp kernel_src/tuned_h200.toml $OUT/
(cd build-py && timeout 150 ctest -L gpu -j 4 --output-on-failure > $OUT/ctest2.txt 2>&1; echo "rc $?" >> $OUT/ctest2.txt)
