#!/usr/bin/env bash
# On the GPU machine: makes the carried build reachable at the absolute path it was built at.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(cat .carry/root)
[ -e build ] || ln -s .carry/build build
if [ "$root" != "$PWD" ]; then mkdir -p "$(dirname "$root")"; ln -sfn "$PWD" "$root"; fi
