#!/usr/bin/env bash
# On the GPU machine: makes the carried build reachable at the absolute path it was built at
# (the tree scripts/carry.sh packed: build, or the one it was given).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(cat .carry/root)
tree=$(cat .carry/tree 2>/dev/null || echo build)
[ -f .carry/build.tar.xz ] && tar -C .carry -xJf .carry/build.tar.xz
[ -e "$tree" ] || ln -s .carry/build "$tree"
if [ "$root" != "$PWD" ]; then mkdir -p "$(dirname "$root")"; ln -sfn "$PWD" "$root"; fi
