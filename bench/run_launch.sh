#!/usr/bin/env bash
# On the GPU machine: bench_launch, then the CuPy and cuda.core arms with kjit's figure from
# the same call, then a ledger of `kjit check`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
build/bench/bench_launch "$@" | tee "$out/bench_launch.log"
kjit_us=$(awk '/^KJIT_US/ {print $2}' "$out/bench_launch.log")
python3 bench/launch_peers.py --kjit-us "$kjit_us" | tee -a "$out/bench_launch.log"
KJIT_LEDGER=1 KJIT_LEDGER_TIMING=1 KJIT_LEDGER_FILE="$out/ledger.csv" build/tools/kjit check --no-cache >/dev/null
build/tools/kjit ledger "$out/ledger.csv" | tee -a "$out/bench_launch.log"
