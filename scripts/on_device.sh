#!/usr/bin/env bash
# On the GPU machine: makes the carried build reachable at the absolute path it was built at
# (the tree scripts/carry.sh packed: build, or the one it was given). The interpreter the Python
# tests were configured with, when this machine lacks it, becomes a wrapper that runs this
# machine's python3 (which has torch). `--peers DIR`: installs DIR's wheels (the peer libraries,
# pure Python or prebuilt) into that python3 without the network.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(cat .carry/root)
tree=$(cat .carry/tree 2>/dev/null || echo build)
[ -f .carry/build.tar.xz ] && tar -C .carry -xJf .carry/build.tar.xz
[ -e "$tree" ] || ln -s .carry/build "$tree"
if [ "$root" != "$PWD" ]; then mkdir -p "$(dirname "$root")"; ln -sfn "$PWD" "$root"; fi
py=$(cat .carry/python 2>/dev/null || true)
host=$(command -v python3 || true)
if [ -n "$py" ] && [ -n "$host" ] && [ ! -e "$py" ]; then
    mkdir -p "$(dirname "$py")"
    printf '#!/bin/sh\nexec %s "$@"\n' "$host" > "$py" && chmod +x "$py"
fi
# The Python module is built for one CPython: say so when this machine's python3 is another.
ext=$(ls "$tree"/python/kjit/*.cpython-*.so 2>/dev/null | head -1)
if [ -n "$ext" ] && [ -n "$host" ]; then
    want=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    case "$ext" in *"$want") ;; *) echo "on_device.sh: $ext is not for this python3 ($want)" >&2 ;; esac
fi
if [ "${1:-}" = --peers ]; then
    python3 -m pip install -q --no-index --no-deps "${2:?--peers DIR}"/*.whl
fi
