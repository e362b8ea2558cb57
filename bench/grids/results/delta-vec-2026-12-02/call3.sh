#!/usr/bin/env bash
# call3: delta_rule with the state in-out (no restore copy in a run): its GPU tests, digests
# against the recorded ones then re-recorded, and the 31 table entries re-tuned (kernel only).
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
(cd build-py && timeout 120 ctest -L gpu -R "delta" --output-on-failure > $OUT/ctest-dr.txt 2>&1; tail -3 $OUT/ctest-dr.txt; grep -E "\(Failed\)|ERROR" $OUT/ctest-dr.txt | head)
timeout 60 build-py/tools/kjit digest check delta_rule > $OUT/digest-check.txt 2>&1; echo "digest check rc $?"; grep -E "IDENTICAL|DIFFER|digest check" $OUT/digest-check.txt
timeout 60 build-py/tools/kjit digest record delta_rule > $OUT/digest-record.txt 2>&1; echo "record rc $?"; tail -1 $OUT/digest-record.txt; cp bench/baselines/delta_rule.toml $OUT/
timeout 60 build-py/tools/kjit bench delta_rule --graph --calls 32 --shape b=32,h=32,dk=128,dv=128 -D DR_VEC=2 -D DR_BV=64 -D DR_DK=128 -D DR_DV=128 > $OUT/bench.txt 2>&1; tail -4 $OUT/bench.txt
D128='b=1,h=16,dk=128,dv=128;b=1,h=32,dk=128,dv=128;b=1,h=64,dk=128,dv=128;b=4,h=16,dk=128,dv=128;b=4,h=32,dk=128,dv=128;b=4,h=64,dk=128,dv=128;b=8,h=16,dk=128,dv=128;b=16,h=16,dk=128,dv=128;b=16,h=32,dk=128,dv=128;b=16,h=64,dk=128,dv=128;b=32,h=16,dk=128,dv=128;b=32,h=32,dk=128,dv=128;b=32,h=64,dk=128,dv=128;b=64,h=16,dk=128,dv=128;b=64,h=32,dk=128,dv=128;b=64,h=64,dk=128,dv=128'
D64=$(echo "$D128" | sed 's/dk=128,dv=128/dk=64,dv=64/g; s/b=8,h=16,dk=64,dv=64;//')
timeout 240 /usr/bin/time -f "tune dk128 %e s" build-py/tools/kjit tune delta_rule --sweep bench/tune/delta_rule.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$D128" > $OUT/tune-dk128.txt 2>&1; tail -1 $OUT/tune-dk128.txt
cp kernel_src/tuned_h200.toml $OUT/
timeout 150 /usr/bin/time -f "tune dk64 %e s" build-py/tools/kjit tune delta_rule --sweep bench/tune/delta_rule_dk64.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$D64" > $OUT/tune-dk64.txt 2>&1; tail -1 $OUT/tune-dk64.txt
cp kernel_src/tuned_h200.toml $OUT/
grep "^recorded" $OUT/tune-dk*.txt | sed 's/.*delta_rule //; s/ f32 on NVIDIA H200 sm_90//'
