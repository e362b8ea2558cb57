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

[ -f "$build_dir/CMakeCache.txt" ] ||
  cmake -S . -B "$build_dir" -DCUDAToolkit_ROOT=/usr/local/cuda
cmake --build "$build_dir" -j "$(nproc)"
