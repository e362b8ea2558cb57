#!/usr/bin/env bash
# Packs the runnable part of a build tree (default ./build; `scripts/carry.sh build-py` for
# another) into .carry/build.tar.xz for the GPU machine (carry `.carry`): stripped executables
# and shared libraries, the CTest files and the Python package (python/kjit), ~8 MB packed.
# There `scripts/on_device.sh` unpacks it where the CTest files expect it (the path it was
# built at).
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${1:-build}
rm -rf .carry/build .carry/build.tar.xz && mkdir -p .carry/build
(cd "$tree" && find . \( -name CMakeFiles -o -path ./include -o -path ./prefix \) -prune -o \
   \( \( -type f -o -type l \) \( -perm -u+x -o -name '*.cmake' -o -path './lib/*' \
      -o -path './python/kjit/*' \) -print \) |
   while read -r f; do mkdir -p "$OLDPWD/.carry/build/$(dirname "$f")"; cp -p "$f" "$OLDPWD/.carry/build/$f"; done)
find .carry/build -type f -perm -u+x -exec strip --strip-debug {} + 2>/dev/null || true
echo "$PWD" > .carry/root
echo "$tree" > .carry/tree
# The interpreter the Python tests were configured with, for on_device.sh to stand in for.
sed -n 's/^Python_EXECUTABLE[^=]*=//p' "$tree/CMakeCache.txt" > .carry/python 2>/dev/null || true
du -sh .carry/build
tar -C .carry -cJf .carry/build.tar.xz build && rm -rf .carry/build
ls -l .carry/build.tar.xz
