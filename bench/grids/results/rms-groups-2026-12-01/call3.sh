#!/usr/bin/env bash
# The GPU suite again, then ncu of kjit's rms_norm (two rows per warp) against torch.compile's at bf16 rows of 1024.
set -u
bash scripts/on_device.sh && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
(cd build-py && ctest -L gpu -j 8 > $OUT/ctest.txt 2>&1; tail -3 $OUT/ctest.txt; grep -E "\(Failed\)|Timeout" $OUT/ctest.txt)
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats"
for r in 8192 32768; do
  python3 .gl/exp/tc.py $r 1024 > /dev/null 2>&1
  echo "=== torch.compile bf16 $r x 1024" >> $OUT/ncu.txt
  ncu --clock-control none -k regex:triton -s 3 -c 1 $S python3 .gl/exp/tc.py $r 1024 >> $OUT/ncu.txt 2>&1
  d="-D RMS_WIDTH=1024 -D RMS_CACHE=4 -D RMS_WARP_ROWS=2 -D RMS_BLOCK=$([ $r = 8192 ] && echo 256 || echo 128)"
  echo "=== kjit bf16 $r x 1024 $d" >> $OUT/ncu.txt
  ncu --clock-control none -k regex:rms_norm -s 2 -c 1 $S build-py/tools/kjit bench rms_norm --src kernel_src --dtype bf16 --shape rows=$r,n=1024 $d --warmup 2 --reps 2 >> $OUT/ncu.txt 2>&1
done
grep -E "^===|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Duration|Theoretical Occ|Stall|Issued Warp|No Eligible|Active Warps Per" $OUT/ncu.txt | head -80
