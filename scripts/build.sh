#!/usr/bin/env bash
# Installs the Debian packages kjit builds with (only those missing), then configures and
# builds into ./build (or $KJIT_BUILD_DIR). The CUDA toolkit is expected at /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${KJIT_BUILD_DIR:-build}

# libhiredis-dev: the remote cache tier (its headers; the library is opened with dlopen);
# redis-server: the remote tier's tests start their own on a loopback port.
packages=(cmake g++ make libxxhash-dev doctest-dev libcli11-dev libtomlplusplus-dev libclang-14-dev libmuparser-dev
  libhiredis-dev redis-server)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "kjit: installing missing packages: ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "kjit: error: the CUDA toolkit is not at /usr/local/cuda (NVRTC and cuda.h are needed)" >&2
  exit 2
fi

# The Python module (python/, `import kjit`) for the python3 on PATH: nanobind comes from PyPI.
# Without pip, PyPI or Python's headers the rest builds and this says why the module does not.
python_flags=(-DKJIT_PYTHON=OFF)
if ! command -v python3 >/dev/null; then
  echo "kjit: note: no python3: the Python module is not built" >&2
elif ! python3 -c 'import sysconfig, os, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  echo "kjit: note: python3 has no headers (Python.h): the Python module is not built" >&2
elif python3 -c 'import nanobind' 2>/dev/null ||
  python3 -m pip install -q --retries 1 --timeout 20 nanobind; then
  python_flags=(-DKJIT_PYTHON=ON "-DPython_EXECUTABLE=$(command -v python3)")
  # NumPy and pandas for the module's tests of NumPy scalars and arrays and of frame=True
  # (kjit needs neither; those tests skip without them).
  python3 -c 'import numpy, pandas' 2>/dev/null ||
    python3 -m pip install -q --retries 1 --timeout 20 numpy pandas ||
    echo "kjit: note: 'python3 -m pip install numpy pandas' failed: their Python tests skip" >&2
else
  echo "kjit: note: 'python3 -m pip install nanobind' failed: the Python module is not built" >&2
fi

# Configured every time (seconds): a tree configured before keeps its cache and gets the flags.
cmake -S . -B "$build_dir" -DCUDAToolkit_ROOT=/usr/local/cuda "${python_flags[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
