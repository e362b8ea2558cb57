#!/usr/bin/env bash
# A user's project as CI runs it: installs kjit into a temporary prefix, builds
# examples/splitk_app against it with find_package(kjit), and runs from inside it what the
# README's "Use kjit in your project" shows: lint, audit, fresh (against the app's binary),
# specialize, a sweep dry run, check (its contract files), and the app itself (without a GPU it compiles its kernels and
# exits 0). Then each kind of mistake, made in a copy of the project, must fail the check that
# owns it with the file:line:col and the exit code the README promises.
# Usage: tests/example_project.sh BUILD_DIR SOURCE_DIR [CXX_COMPILER]
set -euo pipefail
shopt -s inherit_errexit
build_dir=$1
source_dir=$2
cxx=${3:-c++}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kjit-example.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export KJIT_CACHE_DIR=$tmp/cache

fail() { echo "example_project: $*" >&2; exit 1; }
cmake --install "$build_dir" --prefix "$tmp/prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; fail "install"; }
kjit=$tmp/prefix/bin/kjit

project=$tmp/splitk_app
cp -r "$source_dir/examples/splitk_app" "$project"
rm -rf "$project/build"
cmake -S "$project" -B "$project/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" ||
  { cat "$tmp/configure.log"; fail "configure"; }
cmake --build "$project/build" -j "$(nproc)" >"$tmp/build.log" ||
  { cat "$tmp/build.log"; fail "build"; }

# expect DIR CODE PATTERN COMMAND...: runs COMMAND in DIR, wants exit CODE and PATTERN (grep -E)
# in its output.
expect() {
  local dir=$1 code=$2 pattern=$3
  shift 3
  local out status=0
  out=$(cd "$dir" && "$@" 2>&1) || status=$?
  if [ "$status" -ne "$code" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "$out"
    fail "in ${dir#"$tmp/"}: '$*' exited $status (wanted $code) or printed no /$pattern/"
  fi
}

# The project as it is: every check passes.
expect "$project" 0 "sources: kjit.toml:3 kernels/" "$kjit" lint
expect "$project" 0 "audit: 4 compiled, 0 failed; lint: 0 finding\(s\); fresh: up to date" \
  "$kjit" audit
expect "$project" 0 "kjit fresh: build/splitk_app: 3 embedded file\(s\) against kernels" "$kjit" fresh
expect "$project" 0 "kjit specialize kernels/model.toml: 2 kernel\(s\)" "$kjit" specialize
expect "$project" 0 "GEMV_BLOCK=1024" "$kjit" sweep --dry-run
# The contracts (contracts/*.toml) plan every check case; with a GPU each is launched and
# compared with its reference defines.
expect "$project" 0 "launch plans: 0 problem\(s\).*launches skipped|check: 0 failed" "$kjit" check
expect "$project" 0 "splitk_app: (cannot launch|every output matches)" build/splitk_app
# Specialized above, so the app's start-up reads every kernel from the disk cache.
expect "$project" 0 "splitk_gemv +hit +GEMV_BLOCK=256 SPLIT_K=4" build/splitk_app

# A copy of the project (with its build) for each mistake.
broken() {
  rm -rf "$tmp/broken"
  cp -r "$project" "$tmp/broken"
  echo "$tmp/broken"
}

# A #define body that lost one backslash continuation.
b=$(broken)
sed -i '8s/ *\\$//' "$b/kernels/reduce.cuh"
expect "$b" 1 "kernels/reduce.cuh:9:9: error: .*missing .* at the end of line 8.*\[KJ001\]" "$kjit" lint
expect "$b" 1 "kernels/reduce.cuh:9:9: error: .*missing .* at the end of line 8.*\[KJ001\]" "$kjit" audit

# An injected define the source never reads (SPLITK for SPLIT_K).
b=$(broken)
sed -i 's/SPLIT_K = "\${split_k}"/SPLITK = "${split_k}"/' "$b/kernels/model.toml"
expect "$b" 1 "kernels/model.toml:13:[0-9]+: error: .*SPLITK.*\[KJ002\]" "$kjit" lint
expect "$b" 1 "kernels/model.toml:13:13: error: kernel .splitk_gemv.: define SPLITK is never read.*did you mean SPLIT_K" "$kjit" specialize

# A shape file that does not parse.
b=$(broken)
sed -i 's/^d_ff = 14336/d_ff = 14336 14336/' "$b/kernels/model.toml"
expect "$b" 2 "kernels/model.toml:6:14: error: " "$kjit" audit
expect "$b" 2 "kernels/model.toml:6:14: error: " "$kjit" specialize
expect "$b" 2 "kernels/model.toml:6:14: error: " "$kjit" lint

# A sweep file that does not parse.
b=$(broken)
sed -i 's/^rows = 32$/rows = 32 32/' "$b/sweeps/row_softmax.sweep.toml"
expect "$b" 2 "sweeps/row_softmax.sweep.toml:9:11: error: " "$kjit" audit
expect "$b" 2 "sweeps/row_softmax.sweep.toml:9:11: error: " "$kjit" sweep --dry-run

# A sweep file that injects a define its kernel never reads (MAXCOLS for MAX_COLS).
b=$(broken)
sed -i 's/^MAX_COLS = 4096$/MAX_COLS = 4096\nMAXCOLS = 1/' "$b/sweeps/row_softmax.sweep.toml"
expect "$b" 2 "sweeps/row_softmax.sweep.toml:14:1: error: define MAXCOLS is never read.*did you mean MAX_COLS" "$kjit" sweep --dry-run
expect "$b" 1 "sweeps/row_softmax.sweep.toml:14:1: error: define MAXCOLS is never read.*did you mean MAX_COLS" "$kjit" audit
expect "$b" 1 "; sweeps: 1 finding\(s\)" "$kjit" audit

# A contract whose source names no kernel of the project (row_softmx for row_softmax).
b=$(broken)
sed -i 's/^name = "row_softmax"$/name = "row_softmax"\nsource = "row_softmx"/' "$b/contracts/row_softmax.toml"
for verb in audit check "sweep --dry-run"; do
  # shellcheck disable=SC2086 # the verb and its argument
  expect "$b" 2 "contracts/row_softmax.toml:[0-9]+:10: error: contract 'row_softmax' names source 'row_softmx', which is no kernel of the sources.*did you mean row_softmax" "$kjit" $verb
done

# Contracts without a [[check]] case: kjit check would compare nothing.
b=$(broken)
for f in "$b"/contracts/*.toml; do
  python3 - "$f" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
cut = text.find("[[check]]")
open(path, "w").write(text if cut < 0 else text[:cut])
PY
done
expect "$b" 1 "declare no \[\[check\]\] case: nothing would be launched or compared" "$kjit" check

# A contract whose second launch passes an argument it does not declare.
b=$(broken)
sed -i 's/args = \["y", "partial", "rows"\]/args = ["y", "partials", "rows"]/' "$b/contracts/splitk_gemv.toml"
for verb in check "bench splitk_gemv" "sweep --dry-run"; do
  # shellcheck disable=SC2086 # the verb and its argument
  expect "$b" 2 "contracts/splitk_gemv.toml:67:14: error: step 2 passes 'partials'" "$kjit" $verb
done

# A kernel edited after the binary was built.
b=$(broken)
echo "// retuned after the build" >>"$b/kernels/splitk_gemv.cu"
expect "$b" 1 "stale    kernels/splitk_gemv.cu" "$kjit" fresh
expect "$b" 1 "fresh: stale" "$kjit" audit
echo "example_project: every check passed on the project and failed on each broken copy"
