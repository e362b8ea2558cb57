#!/usr/bin/env bash
# On an H200: eager-h200-2026-12-06/call.sh (the gpu suite, then conv1d_cl's eager loads A/B
# over the channel-last grid). Elsewhere: the gpu suite twice (cold cache, then warm), the check
# after kjit check and sweeps read the launch arguments' C++ types (launch_type_problem).
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) exec bash bench/grids/results/eager-h200-2026-12-06/call.sh ;;
esac
bash scripts/on_device.sh > /dev/null 2>&1
export KJIT_CACHE_DIR=/tmp/kc
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader > $OUT/gpu.txt
cat $OUT/gpu.txt
for i in 1 2; do
  (cd build-py && timeout 250 ctest -L gpu -j 8 --output-on-failure > $OUT/ctest-$i.txt 2>&1
   echo "ctest $i rc $? at $SECONDS s: $(grep 'tests passed' $OUT/ctest-$i.txt)")
done
