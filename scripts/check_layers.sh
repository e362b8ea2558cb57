#!/usr/bin/env bash
# The module layering of STYLE.md: core <- jit <- runtime <- kernels <- tuning <- tools, and the
# linter (lint/) on core + jit. Every `#include "X/..."` of a file under
# a module folder must name the same or a lower layer; prints each one that runs upward and
# exits 1 when there is any. Usage: scripts/check_layers.sh [REPO_ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

rank() {
  case $1 in
  core) echo 0 ;; jit) echo 1 ;; runtime) echo 2 ;; kernels) echo 3 ;; tuning) echo 4 ;;
  tools) echo 5 ;; lint) echo 2 ;; *) echo -1 ;;
  esac
}

modules=(core jit lint runtime kernels tuning tools)
bad=0
while IFS=: read -r file line target; do
  module=${file%%/*}
  [ "$(rank "$target")" -ge 0 ] || continue # a system or third-party header
  case $file in
  lint/*) allowed="core jit lint" ;;
  *) allowed="" ;;
  esac
  if [ -n "$allowed" ]; then
    [[ " $allowed " == *" $target "* ]] && continue
  elif [ "$(rank "$target")" -le "$(rank "$module")" ]; then
    continue
  fi
  echo "$file:$line: $module includes $target/ (a higher layer)"
  bad=$((bad + 1))
done < <(grep -rnoE --include='*.cpp' --include='*.hpp' '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[A-Za-z0-9_]+/' \
  "${modules[@]}" | sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]+"/:/; s|/$||')
echo "$bad upward include(s)"
[ "$bad" -eq 0 ]
