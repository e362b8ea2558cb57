#!/usr/bin/env bash
# call4: the one delta_rule entry call2's tune did not reach (b=64 h=64 dk=128).
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
timeout 70 build-py/tools/kjit tune delta_rule --sweep bench/tune/delta_rule.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --shapes "b=64,h=64,dk=128,dv=128" > $OUT/tune-dr-b64h64.txt 2>&1; echo "rc $?"; tail -2 $OUT/tune-dr-b64h64.txt
cp kernel_src/tuned_h200.toml $OUT/
