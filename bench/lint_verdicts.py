#!/usr/bin/env python3
"""Sorts the findings of bench/lint_corpus.sh into classes, each with a verdict checked by hand
(bench/lint-corpus.md says how), and writes one row per finding.

Usage: bench/lint_verdicts.py OUT COMMITS.txt >FINDINGS.tsv; prints the per-class tally to
stderr. A finding no class covers is "unjudged": the tally shows it, so a new kind of finding
is never counted silently."""
import collections
import glob
import json
import os
import re
import sys

# Headers of the C and C++ standard libraries and the host system.
STD = re.compile(r'^(?:[a-z_]+(?:\.h)?|sys/.*|bits/.*|c?std[a-z]*\.h|cxxabi\.h|omp\.h|'
                 r'unistd\.h|dlfcn\.h|execinfo\.h|pthread\.h|malloc\.h)$')
# Libraries outside the projects and outside the toolkit (PyTorch, CUTLASS/CuTe, TVM FFI,
# googletest, pybind11, ROCm, NCCL, MPI, cuDNN frontend, spdlog, ...).
THIRD_PARTY = re.compile(r'^(?:c10|ATen|torch|cutlass|cute|tvm|dlpack|gtest|pybind11|hip|hipcub|'
                         r'rocm|nccl|mpi|cudnn_frontend|spdlog|fmt|nvshmem)\b')

# (class, rule, predicate on (header, message), verdict, reason)
CLASSES = [
    ('std-header', 'KJ005',
     lambda h, m: 'finds no such header' in m and STD.match(h or ''),
     'true', 'C/C++ standard or system header: NVRTC has none, the unit does not compile'),
    ('third-party-header', 'KJ005',
     lambda h, m: ('finds no such header' in m or 'names no file' in m)
     and THIRD_PARTY.match(h or ''),
     'true', 'library outside the project and the toolkit (PyTorch, CUTLASS, TVM, ...): '
             'NVRTC cannot find it with the build\'s include roots'),
    ('toolkit-uncompilable', 'KJ005',
     lambda h, m: 'NVRTC cannot compile it: /usr/local/cuda' in m,
     'true', 'toolkit header that NVRTC rejects (host API or std headers inside); checked by '
             'the NVRTC compile the message quotes'),
    ('project-header-cascade', 'KJ005',
     lambda h, m: 'NVRTC cannot compile it:' in m and 'which NVRTC cannot find' in m,
     'true', 'project header found through -I, but one of its own includes is not found (the '
             'root cause is also reported at that header)'),
    ('project-header-uncompilable', 'KJ005',
     lambda h, m: 'NVRTC cannot compile it:' in m,
     'true', 'project header found through -I that NVRTC rejects (host code inside)'),
    ('not-beside-includer', 'KJ005',
     lambda h, m: 'not beside the including' in m,
     'true', 'NVRTC looks a quoted include up by the name as written, never beside the '
             'includer (tested against NVRTC); the build relies on nvcc\'s lookup'),
    ('generated-or-absent', 'KJ005',
     lambda h, m: ('names no file' in m or 'finds no such header' in m) and not in_project(h),
     'true', 'the header is not in the project (generated at build time, or from a package not '
             'in the corpus)'),
]


PROJECT_FILES = set()  # every '/'-separated path suffix of the current project's files


def in_project(h):
    return bool(h) and os.path.normpath(h).lstrip('./') in PROJECT_FILES


def header(message):
    m = re.match(r'#include [<"]([^>"]+)[>"]', message)
    return m.group(1) if m else None


def main():
    out_dir, commits_file = sys.argv[1], sys.argv[2]
    commits = {}
    with open(commits_file) as f:
        for row in f:
            parts = row.split()
            if len(parts) >= 2:
                commits[parts[0]] = parts[1]
    overrides = {}  # (project, path, line, rule) -> (verdict, reason), judged one by one
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, 'lint_verdicts.tsv')) as f:
        for row in f:
            if row.startswith('#') or not row.strip():
                continue
            project, path, line, rule, verdict, reason = row.rstrip('\n').split('\t')
            overrides[(project, path, int(line), rule)] = (verdict, reason)
    tally = collections.Counter()
    print('project\tcommit\tpath\tline\tcolumn\trule\tclass\tverdict\treason')
    for lint in sorted(glob.glob(os.path.join(out_dir, '*.lint.json'))):
        project = os.path.basename(lint)[:-len('.lint.json')]
        with open(lint) as f:
            findings = json.load(f)
        PROJECT_FILES.clear()
        root = os.path.join(os.path.dirname(commits_file), project)
        for dirpath, _, files in os.walk(root):
            for name in files:
                parts = os.path.relpath(os.path.join(dirpath, name), root).split(os.sep)
                for i in range(len(parts)):
                    PROJECT_FILES.add('/'.join(parts[i:]))
        for x in findings:
            path = x['path'].split(project + '/', 1)[-1]
            key = (project, path, x['line'], x['rule'])
            h = header(x['message'])
            klass, verdict, reason = 'unjudged', 'unjudged', x['message'][:100]
            if key in overrides:
                klass = 'judged'
                verdict, reason = overrides[key]
            else:
                for name, rule, pred, v, why in CLASSES:
                    if rule == x['rule'] and pred(h, x['message']):
                        klass, verdict, reason = name, v, why
                        break
            tally[(x['rule'], klass, verdict)] += 1
            print('\t'.join([project, commits.get(project, '?'), path, str(x['line']),
                             str(x['column']), x['rule'], klass, verdict, reason]))
    total = sum(tally.values())
    false = sum(n for (r, k, v), n in tally.items() if v == 'false')
    for (rule, klass, verdict), n in sorted(tally.items()):
        print(f'{n:6d}  {rule}  {klass:28s} {verdict}', file=sys.stderr)
    print(f'{total} findings, {false} false ({100.0 * false / max(total, 1):.2f} %), '
          f'{tally_unjudged(tally)} unjudged', file=sys.stderr)


def tally_unjudged(tally):
    return sum(n for (r, k, v), n in tally.items() if v == 'unjudged')


main()
