#!/usr/bin/env bash
# call2: the new delta_rule's GPU test, its digests against the recorded ones (then re-recorded
# for the new source), and the table's 31 delta_rule entries re-tuned with the new sweeps.
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
mkdir -p /root/.pyenv/versions/3.12.1/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > /root/.pyenv/versions/3.12.1/bin/python3.12 && chmod +x /root/.pyenv/versions/3.12.1/bin/python3.12
(cd build-py && timeout 120 ctest -L gpu -R "delta-rule" --output-on-failure > $OUT/ctest-dr.txt 2>&1; tail -3 $OUT/ctest-dr.txt)
timeout 60 build-py/tools/kjit digest check delta_rule > $OUT/digest-check.txt 2>&1; echo "digest check rc $?"; cat $OUT/digest-check.txt | head -20
for v in "DR_VEC=4" "DR_VEC=2 DR_BV=64" "DR_VEC=4 DR_DK=128 DR_DV=128"; do
  timeout 60 build-py/tools/kjit digest check delta_rule $(for d in $v; do echo -D $d; done) > $OUT/digest-check-v.txt 2>&1; echo "digest check $v rc $?"; grep -E "IDENTICAL|DIFFERS" $OUT/digest-check-v.txt | head -4
done
timeout 60 build-py/tools/kjit digest record delta_rule > $OUT/digest-record.txt 2>&1; echo "record rc $?"; tail -2 $OUT/digest-record.txt; cp bench/baselines/delta_rule.toml $OUT/
D128='b=1,h=16,dk=128,dv=128;b=1,h=32,dk=128,dv=128;b=1,h=64,dk=128,dv=128;b=4,h=16,dk=128,dv=128;b=4,h=32,dk=128,dv=128;b=4,h=64,dk=128,dv=128;b=8,h=16,dk=128,dv=128;b=16,h=16,dk=128,dv=128;b=16,h=32,dk=128,dv=128;b=16,h=64,dk=128,dv=128;b=32,h=16,dk=128,dv=128;b=32,h=32,dk=128,dv=128;b=32,h=64,dk=128,dv=128;b=64,h=16,dk=128,dv=128;b=64,h=32,dk=128,dv=128;b=64,h=64,dk=128,dv=128'
D64=$(echo "$D128" | sed 's/dk=128,dv=128/dk=64,dv=64/g; s/b=8,h=16,dk=64,dv=64;//')
timeout 260 /usr/bin/time -f "tune dk128 %e s" build-py/tools/kjit tune delta_rule --sweep bench/tune/delta_rule.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$D128" > $OUT/tune-dk128.txt 2>&1; tail -2 $OUT/tune-dk128.txt
cp kernel_src/tuned_h200.toml $OUT/
timeout 200 /usr/bin/time -f "tune dk64 %e s" build-py/tools/kjit tune delta_rule --sweep bench/tune/delta_rule_dk64.sweep.toml --table kernel_src/tuned_h200.toml --src kernel_src --shapes "$D64" > $OUT/tune-dk64.txt 2>&1; tail -2 $OUT/tune-dk64.txt
cp kernel_src/tuned_h200.toml $OUT/
