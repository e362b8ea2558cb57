#!/usr/bin/env bash
# Builds the libFuzzer targets into ./build-fuzz (clang++-14, AddressSanitizer) and runs
# fuzz_lint for a bounded time over a corpus seeded from kernel_src/ and the lint fixtures.
# Exit 0: no crash and no hang; a failing input is left in build-fuzz/ as crash-* or timeout-*.
# Usage: fuzz/run.sh [SECONDS]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build_dir=build-fuzz

packages=(clang-14 libclang-rt-14-dev libclang-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "kjit fuzz: installing missing packages: ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

[ -f "$build_dir/CMakeCache.txt" ] ||
  cmake -S . -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++-14 -DKJIT_FUZZ=ON \
    -DKJIT_BUILD_TESTS=OFF -DCUDAToolkit_ROOT=/usr/local/cuda >/dev/null
cmake --build "$build_dir" --target fuzz_lint -j "$(nproc)"

corpus="$build_dir/corpus/lint"
mkdir -p "$corpus"
cp kernel_src/*.cu kernel_src/*.cuh tests/fixtures/lint/*.cu "$corpus"/
echo "kjit fuzz: fuzz_lint for ${seconds}s over $(ls "$corpus" | wc -l) corpus file(s)"
"$build_dir/fuzz/fuzz_lint" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=16384 -print_final_stats=1 -artifact_prefix="$build_dir/" "$corpus"
