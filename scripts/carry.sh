#!/usr/bin/env bash
# Packs the runnable part of ./build (stripped executables and the CTest files) into
# .carry/build for the GPU machine, where it must be reachable at this checkout's absolute
# path (the CTest files name it): there, run `scripts/on_device.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .carry/build && mkdir -p .carry/build
(cd build && find . \( -name CMakeFiles -o -path ./include -o -path ./prefix \) -prune -o \
   \( \( -type f -o -type l \) \( -perm -u+x -o -name '*.cmake' -o -path './lib/*' \) -print \) |
   while read -r f; do mkdir -p "../.carry/build/$(dirname "$f")"; cp -p "$f" "../.carry/build/$f"; done)
find .carry/build -type f -perm -u+x -exec strip --strip-debug {} + 2>/dev/null || true
echo "$PWD" > .carry/root
du -sh .carry/build
