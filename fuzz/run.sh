#!/usr/bin/env bash
# Builds the libFuzzer targets into ./build-fuzz (clang++-14, AddressSanitizer; the directory
# is $KJIT_FUZZ_BUILD_DIR when set) and runs each for SECONDS: fuzz_lint over kernel_src/ and
# the lint fixtures, fuzz_toml over every TOML file of the repo (sweep specs with inline
# contracts, shape files, project files, digest baselines, fixtures) and fuzz/seeds/project,
# fuzz_cache_entry from an empty corpus, fuzz_includes over kernel_src/ and the lint fixtures,
# fuzz_sweep over every sweep file and fuzz/seeds/sweep (huge ranges, a constraint that
# divides by zero), fuzz_flags over the flags-file fixtures and
# fuzz/seeds/flags, fuzz_remote_entry (the remote tier's signed envelope and Redis addresses)
# from a few addresses, fuzz_entry_params (a cache entry's parameter types and lowered names)
# over fuzz/seeds/entry_params, fuzz_embed_manifest (the manifest `kjit fresh --binary` reads
# from a binary) over fuzz/seeds/embed_manifest.
# Exit 0: no crash and no hang in any target; a failing input is left in the build directory
# as <target>-crash-* or <target>-timeout-*.
# Usage: fuzz/run.sh [SECONDS]   (default 30 per target)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build_dir=${KJIT_FUZZ_BUILD_DIR:-build-fuzz}

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
targets=(fuzz_lint fuzz_toml fuzz_cache_entry fuzz_includes fuzz_sweep fuzz_flags
  fuzz_remote_entry fuzz_entry_params fuzz_embed_manifest)
cmake --build "$build_dir" --target "${targets[@]}" -j "$(nproc)"

# Seeds: one directory per target; file names keep their origin (bench/sweep48.toml ->
# bench_sweep48.toml) so same-named files of different directories do not collide.
seed() {
  local corpus="$build_dir/corpus/$1"
  shift
  mkdir -p "$corpus"
  for f in "$@"; do cp "$f" "$corpus/${f//\//_}"; done
}
shopt -s globstar nullglob
seed fuzz_lint kernel_src/*.cu kernel_src/*.cuh tests/fixtures/lint/*.cu
seed fuzz_toml kernel_src/*.toml bench/**/*.toml tests/fixtures/**/*.toml kjit.toml examples/**/kjit.toml \
  fuzz/seeds/project/*.toml
seed fuzz_cache_entry
seed fuzz_includes kernel_src/*.cu kernel_src/*.cuh tests/fixtures/lint/*.cu
seed fuzz_sweep kernel_src/*.sweep.toml bench/**/*.toml tests/fixtures/sweep/*.toml fuzz/seeds/sweep/*.toml
seed fuzz_flags tests/fixtures/env/*.toml fuzz/seeds/flags/*.toml
seed fuzz_remote_entry
printf 'redis://u:pw@[::1]:6380/2' >"$build_dir/corpus/fuzz_remote_entry/address"
seed fuzz_entry_params fuzz/seeds/entry_params/*
seed fuzz_embed_manifest fuzz/seeds/embed_manifest/*

status=0
for target in "${targets[@]}"; do
  corpus="$build_dir/corpus/$target"
  echo "kjit fuzz: $target for ${seconds}s over $(ls "$corpus" | wc -l) corpus file(s)"
  "$build_dir/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -print_final_stats=1 -artifact_prefix="$build_dir/$target-" "$corpus" ||
    { status=1; echo "kjit fuzz: $target FAILED (input left in $build_dir/)"; }
done
exit $status
