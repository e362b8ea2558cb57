#!/usr/bin/env bash
# kjit's main job: builds if needed, then `kjit check`: compile every embedded kernel for
# sm_90 and, where a GPU is present, launch each at the default shapes against the float64
# reference. Arguments go to `kjit check` (e.g. --seed 7).
set -euo pipefail
cd "$(dirname "$0")"
build_dir=${KJIT_BUILD_DIR:-build}
if command -v cmake >/dev/null; then
  scripts/build.sh >/dev/null
elif [ ! -x "$build_dir/tools/kjit" ]; then
  echo "kjit: error: no build at $build_dir and no cmake to make one" >&2
  exit 2
fi
exec "$build_dir/tools/kjit" check "$@"
