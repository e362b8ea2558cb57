#!/usr/bin/env bash
set -u
bash scripts/on_device.sh && export KJIT_CACHE_DIR=/tmp/kc
python3 -m pip install -q --no-index --no-deps .gl/whl/*.whl > /tmp/pip.txt 2>&1
PYTHONPATH=build-py/python timeout 300 python3 .gl/exp/tgap2.py > $OUT/tgap2.txt 2>&1; cat $OUT/tgap2.txt | tail -20
