#!/usr/bin/env bash
# Runs `kjit lint` and `kjit sig --verify` over a corpus of CUDA projects, one directory per
# project (CORPUS/owner+repo/, as `fetch` brings them), and writes per project:
#   OUT/<project>.lint.json   every finding (kjit lint --json)
#   OUT/<project>.lint.err    its notes
#   OUT/<project>.sig.json    every entry point (kjit sig --json --verify)
#   OUT/<project>.sig.err     its notes and the verify summary
# and OUT/summary.tsv: project, .cu/.cuh files, findings per rule, __global__ definitions
# (bench/global_defs.py), how many of them sig lists, entry points listed, verify
# agreed/checked, seconds for lint and for sig.
# Each project is linted with the -I directories bench/lint_corpus_includes.txt names for it
# (DeepGEMM's CUTLASS is its submodule third-party/cutlass at the commit it pins, f3fde58, its
# include/ only, extracted into CORPUS/_deps/cutlass: a dependency, not a project measured).
# Usage: bench/lint_corpus.sh [CORPUS [OUT [KJIT]]]; SIG_VERIFY=0 skips --verify.
set -euo pipefail
corpus=${1:-/work/corpus}
out=${2:-build/lint-corpus}
kjit=${3:-build/tools/kjit}
mkdir -p "$out"
printf 'project\tfiles\tfindings\tper_rule\tglobal_defs\tdefs_listed\tlisted\tverify\tlint_s\tsig_s\n' \
    >"$out/summary.tsv"
for dir in "$corpus"/*/; do
    project=$(basename "$dir")
    [ "$project" = _deps ] && continue
    files=$(find "$dir" -name '*.cu' -o -name '*.cuh' | wc -l)
    includes=()
    for d in $(awk -v p="$project" '$1 == p { $1 = ""; print }' \
        "$(dirname "$0")/lint_corpus_includes.txt"); do
        includes+=(-I "$dir$d")
    done
    verify=--verify
    [ "${SIG_VERIFY:-1}" = 0 ] && verify=
    t0=$(date +%s.%N)
    "$kjit" lint --json "${includes[@]}" "$dir" >"$out/$project.lint.json" \
        2>"$out/$project.lint.err" || true
    t1=$(date +%s.%N)
    # sig's units: the tree; for a project whose .cu files define no kernel (its kernels are
    # templates in headers that units generated at run time include: DeepGEMM), each header
    # holding a definition as well.
    "$(dirname "$0")/global_defs.py" "$dir" >"$out/$project.defs.tsv"
    units=("$dir")
    if ! cut -f1 "$out/$project.defs.tsv" | grep -q '\.cu$'; then
        mapfile -t -O 1 units < <(cut -f1 "$out/$project.defs.tsv" | sort -u)
    fi
    "$kjit" sig --json $verify "${includes[@]}" "${units[@]}" >"$out/$project.sig.json" \
        2>"$out/$project.sig.err" || true
    t2=$(date +%s.%N)
    findings=$(grep -c '"rule": ' "$out/$project.lint.json" || true)
    per_rule=$( (grep -o '"rule": "KJ[0-9]*"' "$out/$project.lint.json" || true) | sort | uniq -c |
        awk '{printf "%s%s=%s", sep, substr($3, 2, 5), $1; sep=" "}')
    # __global__ definitions outside comments, literals and #define bodies, and how many of
    # them sig lists (OUT/<project>.sig.missed names the others).
    "$(dirname "$0")/sig_coverage.py" "$out/$project.defs.tsv" "$out/$project.sig.json" \
        >"$out/$project.sig.missed"
    read -r covered global_defs <"$out/$project.sig.missed"
    listed=$(grep -c '"qualified": ' "$out/$project.sig.json" || true)
    verify=$(grep -o 'verify: .*' "$out/$project.sig.err" | head -1 || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\n' "$project" "$files" "$findings" \
        "$per_rule" "$global_defs" "$covered" "$listed" "$verify" "$(echo "$t1 - $t0" | bc)" \
        "$(echo "$t2 - $t1" | bc)" >>"$out/summary.tsv"
done
column -t -s $'\t' "$out/summary.tsv"
