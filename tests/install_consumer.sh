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
# The installed kjit finds muparser in the prefix, not on the system (GPU machines lack it).
libs=$(ldd "$tmp/prefix/bin/kjit")
grep -q "libmuparser.so.* => $tmp/prefix/.*/kjit/libmuparser.so" <<<"$libs" ||
  { echo "$libs"; echo "install_consumer: the installed kjit does not load the prefix's muparser" >&2; exit 1; }
# Installed headers name each other <kjit/...>-rooted: a consumer's own runtime/ or jit/ headers
# can never be picked up in their place.
if grep -rnE '#include "(core|jit|lint|runtime|kernels|tuning)/' "$tmp/prefix/include/kjit"; then
  echo "install_consumer: installed headers include repo-rooted paths (above)" >&2; exit 1
fi
# A module's detail/ headers (lint's libclang C API) are its own, not the package's.
[ ! -e "$tmp/prefix/include/kjit/lint/detail" ] ||
  { echo "install_consumer: include/kjit/lint/detail installed" >&2; exit 1; }

# shape_app asks for COMPONENTS runtime: it must configure with muparser's package hidden.
cmake -S "$source_dir/examples/shape_app" -B "$tmp/app" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  --no-warn-unused-cli -DCMAKE_DISABLE_FIND_PACKAGE_muparser=ON >"$tmp/configure.log" ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/app" -j "$(nproc)" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }

# A fresh cache: the app must compile its kernel, not find it from an earlier run. It runs in
# its own build directory, as a user runs it: inside kjit's tree the Engine would read the
# kernels kjit's own kjit.toml names (the project file comes before the embedded copies).
(cd "$tmp/app" && KJIT_CACHE_DIR="$tmp/cache" ./shape_app)

# The app's embedded kernels against its sources, read from the app's own bytes.
kjit=$tmp/prefix/bin/kjit
status=0
out=$("$kjit" fresh --src "$source_dir/examples/shape_app/kernels" --binary "$tmp/app/shape_app" 2>&1) ||
  status=$?
[ "$status" -eq 0 ] && grep -q "fresh: up to date" <<<"$out" ||
  { echo "$out"; echo "install_consumer: fresh of the app exited $status" >&2; exit 1; }
cp -r "$source_dir/examples/shape_app/kernels" "$tmp/kernels"
echo "// edited after the build" >>"$tmp/kernels/saxpy.cu"
status=0
out=$("$kjit" fresh --src "$tmp/kernels" --binary "$tmp/app/shape_app") || status=$?
[ "$status" -eq 1 ] && grep -q "stale    $tmp/kernels/saxpy.cu" <<<"$out" ||
  { echo "$out"; echo "install_consumer: an edit after the build is not stale" >&2; exit 1; }
