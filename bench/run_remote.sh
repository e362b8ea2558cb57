#!/usr/bin/env bash
# The remote tier's figures on this machine, with a redis-server of its own on a free loopback
# port (stopped at the end): bench_remote (a remote hit against a disk hit and a cold compile,
# per kernel), then the full-size simulated fleet: HOSTS `kjit specialize` processes at once,
# each with a disk cache of its own (its own "host"), of KEYS distinct rms_norm
# specializations (a salted copy of kernel_src/, so no cache has seen them): first without the
# remote tier, then sharing the store, then a second wave of HOSTS fresh hosts. Per wave:
# compiles, remote hits, wall time per process, bytes into and out of the store (Redis's own
# counters). The hosts wait up to 10 s for an answer (KJIT_REMOTE_TIMEOUT_MS): on a machine of
# few cores the server shares them with HOSTS compiling processes, and a starved server must
# not read as a slow store.
# Usage: bench/run_remote.sh [HOSTS] [KEYS]   (default 16 64; needs redis-server, ./build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KJIT_BUILD_DIR:-build}
hosts=${1:-16}
keys=${2:-64}
kjit=$PWD/$build/tools/kjit
work=$(mktemp -d)
redis_pid=
cleanup() {
  [ -z "$redis_pid" ] || { kill "$redis_pid" 2>/dev/null; wait "$redis_pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT

port=
for _ in $(seq 50); do
  p=$((20000 + RANDOM % 40000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || { echo "run_remote: no free port" >&2; exit 2; }
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --logfile "$work/redis.log" &
redis_pid=$!
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
head -c 32 /dev/urandom | base64 >"$work/secret"
chmod 600 "$work/secret"
url=redis://127.0.0.1:$port/0
echo "machine: $(nproc) cores, $(redis-server --version | cut -d' ' -f1-3)"

"$build/bench/bench_remote" --redis "$url" --secret "$work/secret"
redis-cli -p "$port" flushall >/dev/null

# The fleet's kernels: rms_norm, salted, in KEYS specializations (RMS_BLOCK x RMS_CACHE).
cp -r kernel_src "$work/src"
salt=$RANDOM$RANDOM
echo "extern \"C\" __global__ void kjit_fleet_$salt(int* p) { if (p) *p = 1; }" >>"$work/src/rms_norm.cu"
{
  echo "[shape]"
  echo "fleet = 1"
  i=0
  for cache in $(seq 1 16); do
    for block in 32 64 128 256 512 1024; do
      [ "$i" -lt "$keys" ] || break 2
      printf '\n[[kernel]]\nname = "r%d"\nsource = "rms_norm"\n' "$i"
      printf 'defines = { RMS_BLOCK = %d, RMS_CACHE = %d }\n' "$block" "$cache"
      i=$((i + 1))
    done
  done
} >"$work/fleet.toml"

net() { redis-cli -p "$port" info stats | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'; }
wave() { # name [remote url: empty for hosts without the remote tier]
  local in0 out0 start end pids=()
  in0=$(net total_net_input_bytes)
  out0=$(net total_net_output_bytes)
  start=$(date +%s%N)
  for i in $(seq "$hosts"); do
    (KJIT_CACHE_DIR="$work/$1$i" KJIT_REMOTE_CACHE="$2" KJIT_REMOTE_SECRET="$work/secret" \
      KJIT_REMOTE_TIMEOUT_MS=10000 \
      "$kjit" specialize --src "$work/src" "$work/fleet.toml" >"$work/$1$i.out" 2>&1 ||
      echo "host $i exited $?" >>"$work/$1.failed") &
    pids+=($!)
  done
  wait "${pids[@]}" # not redis-server, also a child of this shell
  end=$(date +%s%N)
  [ ! -f "$work/$1.failed" ] || { cat "$work/$1.failed" "$work/$1"*.out >&2; exit 1; }
  local compiles remote ms
  compiles=$(cat "$work/$1"*.out | awk '$1 ~ /^r[0-9]+$/ && $2 == "miss"' | wc -l)
  remote=$(cat "$work/$1"*.out | awk '$1 ~ /^r[0-9]+$/ && $2 == "remote"' | wc -l)
  ms=$(cat "$work/$1"*.out | sed -n 's/^specialize: .* failed, \([0-9.]*\) ms$/\1/p' | sort -n |
    awk '{ v[NR] = $1 } END { printf "min %.0f / median %.0f / max %.0f ms", v[1], v[int((NR + 1) / 2)], v[NR] }')
  echo "$1 wave: $hosts hosts x $keys keys: $compiles compiles, $remote remote hits;" \
    "per process $ms; wall $(((end - start) / 1000000)) ms;" \
    "store in $(($(net total_net_input_bytes) - in0)) B, out $(($(net total_net_output_bytes) - out0)) B"
  if grep -h "warning" "$work/$1"*.out | sort -u | head -5 | grep -q .; then
    echo "  warnings:"; grep -h "warning" "$work/$1"*.out | sort -u | head -5
  fi
}
# Without the remote tier (each host compiles every key), then a fleet sharing one store (first
# wave), then fresh hosts after it (second wave).
wave alone ""
wave first "$url"
wave second "$url"
