#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and
# the concurrent parts (cache, compile pool, engine, the remote tier and its fleet) under
# ThreadSanitizer (build-tsan/).
# Usage: scripts/sanitize.sh [asan|tsan|all]
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
jobs=$(nproc)
run() { # dir flags ctest-args...
  local dir=$1 flags=$2
  shift 2
  [ -f "$dir/CMakeCache.txt" ] || cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags -Wl,--as-needed" \
    -DCMAKE_SHARED_LINKER_FLAGS="$flags -Wl,--as-needed" >/dev/null
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" "$@")
}
# The kjit binaries run child processes (compile workers, the CLI under test): they inherit
# these options. Leak checking is off: NVRTC keeps process-lifetime allocations.
# (--as-needed: CUDA::nvrtc names libcuda, which must not become a load-time dependency.)
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
if [ "$which" = asan ] || [ "$which" = all ]; then
  run build-asan "-fsanitize=address,undefined -fno-sanitize-recover=undefined" -LE "gpu|install"
fi
if [ "$which" = tsan ] || [ "$which" = all ]; then
  run build-tsan "-fsanitize=thread" -L "cache|fleet|launch|runtime"
fi
