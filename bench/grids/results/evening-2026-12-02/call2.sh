#!/usr/bin/env bash
# call2: re-tune the 53 rms_norm entries whose pick's CUBIN the multi-slot warp sums changed
# (blocks of 256 and 512 threads; the 31 others compile byte-identical and were restamped), each
# with its sweep (the large fp32 rows with rms_norm_wide, as bf16's since 2026-12-02); then
# conv1d at the long grid shapes not tuned yet (bf16 at batch 1 and 4, three fp32 ones).
set -u
bash scripts/on_device.sh > /dev/null && export KJIT_CACHE_DIR=/tmp/kc
K=build-py/tools/kjit
tune() { # kernel sweep dtype label shapes
  timeout ${5:-150} /usr/bin/time -f "tune $1 $3 $4 %e s" $K tune $1 --sweep $2 --table kernel_src/tuned_h200.toml --src kernel_src --dtype $3 --shapes "$6" > $OUT/tune-$1-$3-$4.txt 2>&1
  echo "rc $?"; tail -1 $OUT/tune-$1-$3-$4.txt; cp kernel_src/tuned_h200.toml $OUT/; echo "elapsed $SECONDS s"
}
T=bench/tune
tune rms_norm $T/rms_norm_decode_graph.sweep.toml bf16 graph 60 'rows=1,n=1024;rows=32,n=1024;rows=1,n=2048;rows=32,n=2048;rows=1,n=4096;rows=32,n=4096;rows=1,n=7168;rows=32,n=7168;rows=1,n=8192;rows=32,n=8192'
tune rms_norm $T/rms_norm_decode_graph.sweep.toml f32 graph 60 'rows=1,n=1024;rows=32,n=1024;rows=1,n=2048;rows=32,n=2048;rows=1,n=4096;rows=1,n=8192'
tune rms_norm $T/rms_norm_decode.sweep.toml bf16 decode 60 'rows=256,n=1024;rows=256,n=2048;rows=256,n=4096;rows=256,n=7168;rows=256,n=8192'
tune rms_norm $T/rms_norm_decode.sweep.toml f32 decode 60 'rows=256,n=1024;rows=256,n=2048;rows=256,n=4096;rows=256,n=7168;rows=256,n=8192'
tune rms_norm $T/rms_norm_wide.sweep.toml bf16 wide 150 'rows=2048,n=4096;rows=2048,n=7168;rows=8192,n=7168;rows=16384,n=7168;rows=32768,n=7168;rows=2048,n=8192;rows=8192,n=8192;rows=16384,n=8192;rows=32768,n=8192;rows=2048,n=16384;rows=8192,n=16384;rows=16384,n=16384;rows=32768,n=16384'
tune rms_norm $T/rms_norm_wide.sweep.toml f32 wide 150 'rows=2048,n=4096;rows=8192,n=4096;rows=2048,n=7168;rows=8192,n=7168;rows=16384,n=7168;rows=32768,n=7168;rows=2048,n=8192;rows=8192,n=8192;rows=16384,n=8192;rows=32768,n=8192;rows=2048,n=16384;rows=8192,n=16384;rows=16384,n=16384;rows=32768,n=16384'
LARGE='b=1,c=1024,t=2048;b=1,c=1024,t=8192;b=1,c=4096,t=2048;b=1,c=4096,t=8192;b=1,c=8192,t=2048;b=1,c=8192,t=8192;b=4,c=1024,t=2048;b=4,c=1024,t=8192;b=4,c=4096,t=8192;b=4,c=8192,t=2048;b=4,c=8192,t=8192'
left=$((585 - SECONDS)); [ $left -gt 40 ] && tune conv1d kernel_src/conv1d.sweep.toml bf16 LARGE $left "$LARGE"
left=$((585 - SECONDS)); [ $left -gt 40 ] && tune conv1d kernel_src/conv1d.sweep.toml f32 LARGE3 $left 'b=4,c=4096,t=8192;b=4,c=8192,t=2048;b=4,c=8192,t=8192'
