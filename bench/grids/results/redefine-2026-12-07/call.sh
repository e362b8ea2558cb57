#!/usr/bin/env bash
# After the redefinition check (79bd993): on an H200, the eager A/B at conv1d_cl's defaults
# (eager-h200-2026-12-06/call.sh: the gpu suite, then every channel-last grid shape with and
# without CONV_CL_EAGER); on any other card, the gpu suite twice.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) END=${END:-560} exec bash bench/grids/results/eager-h200-2026-12-06/call.sh ;;
esac
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
cd build-py
for i in 1 2; do
  timeout 250 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$i.txt 2>&1
  echo "ctest $i rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-$i.txt)"
done
