#!/usr/bin/env bash
set -u
bash scripts/on_device.sh >/dev/null 2>&1; export KJIT_CACHE_DIR=/tmp/kc
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
export PYTHONPATH=$PWD/build-py/python
timeout 200 ncu --cache-control none --clock-control none -k regex:'rms|triton' --launch-skip 8 --launch-count 4 \
  --set full --import-source no -o /tmp/rep python3 .gl/exp/ncu2.py .gl/exp/srcA > $OUT/ncu-run.txt 2>&1
ncu -i /tmp/rep.ncu-rep --page source --csv --print-source sass > $OUT/source.csv 2>$OUT/source.err
ncu -i /tmp/rep.ncu-rep --page details --print-details all > $OUT/details.txt 2>&1
ncu -i /tmp/rep.ncu-rep --page raw --csv > $OUT/raw.csv 2>&1
ls -la /tmp/kc | head; find /tmp/kc -type f | head -3 > $OUT/kc.txt
