#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds examples/shape_app against it with
# find_package(kjit) and runs it. Without a GPU the app compiles its kernels and exits 0.
# Usage: tests/install_consumer.sh BUILD_DIR SOURCE_DIR [CXX_COMPILER]
set -euo pipefail
build_dir=$1
source_dir=$2
cxx=${3:-c++}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kjit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build_dir" --prefix "$tmp/prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; exit 1; }
for f in include/kjit/jit/compiler.hpp include/kjit/lint/lint.hpp include/kjit/runtime/engine.hpp \
  bin/kjit bin/kjit-embed; do
  [ -e "$tmp/prefix/$f" ] || { echo "install_consumer: $f not installed" >&2; exit 1; }
done
# A module's detail/ headers (lint's libclang C API) are its own, not the package's.
[ ! -e "$tmp/prefix/include/kjit/lint/detail" ] ||
  { echo "install_consumer: include/kjit/lint/detail installed" >&2; exit 1; }

cmake -S "$source_dir/examples/shape_app" -B "$tmp/app" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/app" -j "$(nproc)" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }

# A fresh cache: the app must compile its kernel, not find it from an earlier run. It runs in
# its own build directory, as a user runs it: inside kjit's tree the Engine would read the
# kernels kjit's own kjit.toml names (the project file comes before the embedded copies).
(cd "$tmp/app" && KJIT_CACHE_DIR="$tmp/cache" ./shape_app)
