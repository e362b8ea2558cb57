#!/usr/bin/env bash
# call3: bf16 rows of 7168 (896 chunks of 16 bytes) with a reduction 896 wide (RMS_WIDTH 896:
# the same bits as 1024 for rows of at most 896 chunks), so blocks of 128, 224, 448 or 896
# threads split a row evenly (at 1024 a block of 256 holds 3.5 chunks a thread, and the one-row
# form does not apply), against the table's define set (rms_ab.py, A B B A pairs).
set -u
bash scripts/on_device.sh --peers .gl/whl > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc PYTHONPATH=$PWD/build-py/python:$PWD/bench TRITON_CACHE_DIR=/tmp/tc
T=kernel_src/tuned_h200.toml
AB="python3 bench/grids/results/latency-2026-12-03/rms_ab.py"
M=.gl/exp/main
W=RMS_WIDTH=896
timeout 150 $AB $T bf16 1x7168,32x7168 tab=$M \
  b896=$M@$W,RMS_BLOCK=896,RMS_CACHE=1 b448=$M@$W,RMS_BLOCK=448,RMS_CACHE=2 \
  b224=$M@$W,RMS_BLOCK=224,RMS_CACHE=4 b128=$M@$W,RMS_BLOCK=128,RMS_CACHE=7 > $OUT/w896-decode.txt 2>&1
echo "decode at $SECONDS s"
O=RMS_N=n,RMS_ONE_ROW=1,RMS_W_EARLY=1
timeout 120 $AB $T bf16 256x7168 tab=$M tabn=$M@RMS_N=n \
  b896=$M@$W,RMS_BLOCK=896,RMS_CACHE=1,$O b448=$M@$W,RMS_BLOCK=448,RMS_CACHE=2,$O \
  b224=$M@$W,RMS_BLOCK=224,RMS_CACHE=4,$O b224c=$M@$W,RMS_BLOCK=224,RMS_CACHE=4 > $OUT/w896-256.txt 2>&1
echo "256 at $SECONDS s"
K=RMS_UNROLL=0,RMS_HINT=0
timeout 280 $AB $T bf16 2048x7168,8192x7168,16384x7168,32768x7168 tab=$M \
  b448c2=$M@$W,RMS_BLOCK=448,RMS_CACHE=2,$K b224c4=$M@$W,RMS_BLOCK=224,RMS_CACHE=4,$K \
  b128c7=$M@$W,RMS_BLOCK=128,RMS_CACHE=7,$K \
  b448u2=$M@$W,RMS_BLOCK=448,RMS_CACHE=0,RMS_UNROLL=2,RMS_HINT=1 \
  b224u4=$M@$W,RMS_BLOCK=224,RMS_CACHE=0,RMS_UNROLL=4,RMS_HINT=1 > $OUT/w896-large.txt 2>&1
echo "large at $SECONDS s"
