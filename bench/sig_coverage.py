#!/usr/bin/env python3
"""How many of the __global__ definitions bench/global_defs.py found `kjit sig --json` lists.

A definition counts as listed when sig lists an entry point of that name defined in that file
(a template counts once, with or without instantiations). Prints "listed defs", then each
definition not listed (path, line, name).
Usage: bench/sig_coverage.py DEFS.tsv SIG.json"""
import json
import os
import sys

defs = []
with open(sys.argv[1]) as f:
    for row in f:
        path, line, name = row.rstrip('\n').split('\t')
        defs.append((os.path.normpath(path), int(line), name))
try:
    with open(sys.argv[2]) as f:
        entries = json.load(f)
except (OSError, ValueError):
    entries = []
listed = {(os.path.normpath(e['path']), e['name']) for e in entries if e.get('path')}
missed = [d for d in defs if (d[0], d[2]) not in listed]
print(len(defs) - len(missed), len(defs))
for path, line, name in missed:
    print(f'{path}\t{line}\t{name}')
