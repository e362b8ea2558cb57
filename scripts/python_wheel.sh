#!/usr/bin/env bash
# The Python module as a user installs it: `pip wheel .` (scikit-build-core over this CMake, in
# build/wheel/), the wheel installed into a fresh virtual environment, and the CPU suite of
# python/tests run against that installation (the kjit binary of ./build is the C++ path the
# tests compare with). Needs pip and PyPI (scikit-build-core, nanobind); CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/wheel
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
python3 -m pip wheel . --no-deps -w "$out" -q
python3 -m venv "$out/venv"
"$out/venv/bin/python" -m pip install -q --no-index "$out"/kjit-*.whl
echo "kjit: built and installed $(basename "$out"/kjit-*.whl) in $(( $(date +%s) - start )) s"
# NumPy and pandas for the tests of NumPy scalars and arrays and of frame=True (kjit needs
# neither; those tests skip without them).
"$out/venv/bin/python" -m pip install -q --retries 1 --timeout 20 numpy pandas ||
  echo "kjit: note: numpy and pandas not installed in the test venv: their tests skip" >&2
# PYTHONPATH unset: only the installed package can be imported (run.py says which it got).
env -u PYTHONPATH KJIT_BUILD_DIR="$PWD/build" KJIT_CACHE_DIR="$PWD/$out/cache" \
  "$out/venv/bin/python" python/tests/run.py cpu
