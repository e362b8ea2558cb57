#!/usr/bin/env bash
# On the GPU machine: bench_launch (C++: kjit's checked launch against raw cuLaunchKernel), then
# the Python arms (kjit's module, CuPy RawKernel, cuda.core, Triton) with the C++ figures of the
# same call, then a ledger of `kjit check`. The build tree is KJIT_BUILD_DIR (default build), its
# python/ folder the module's.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
build=${KJIT_BUILD_DIR:-build}
"$build"/bench/bench_launch "$@" | tee "$out/bench_launch.log"
kjit_us=$(awk '/^KJIT_US/ {print $2}' "$out/bench_launch.log")
raw_us=$(awk '/^RAW_US/ {print $2}' "$out/bench_launch.log")
PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" \
  python3 bench/launch_peers.py --kjit-us "$kjit_us" --raw-us "$raw_us" | tee -a "$out/bench_launch.log"
KJIT_LEDGER=1 KJIT_LEDGER_TIMING=1 KJIT_LEDGER_FILE="$out/ledger.csv" "$build"/tools/kjit check --no-cache >/dev/null
"$build"/tools/kjit ledger "$out/ledger.csv" | tee -a "$out/bench_launch.log"
