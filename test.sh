#!/usr/bin/env bash
# Installs missing Debian packages, builds, and runs every test. Tests that need a GPU are
# reported as skipped, with the reason, on a machine without one.
set -euo pipefail
cd "$(dirname "$0")"
build_dir=${KJIT_BUILD_DIR:-build}
scripts/build.sh
status=0
(cd "$build_dir" && ctest --output-on-failure -j "$(nproc)" "$@") || status=$?
reasons=$(grep -ho "^SKIPPED: .*" "$build_dir/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u || true)
[ -z "$reasons" ] || echo "gpu tests skipped, reason: ${reasons#SKIPPED: }"
exit $status
