#!/usr/bin/env python3
# Seeds the mistake KJ001 exists for into real code: for every multi-line #define in the
# corpus's .cu/.cuh files (and in WIDE, other C/C++ files of the corpus copied as .cu), drops
# the continuation on the body's last line that has one, writes each mutated file into OUT
# (m<N>.cu) and the list of mutations into OUT.json. Then lint OUT and score it with --score:
#   bench/lint_seed.py OUT [CORPUS [WIDE]]
#   kjit lint --json OUT > OUT.findings.json; bench/lint_seed.py --score OUT
# A mutation is caught when a KJ001 or KJ007 finding falls on the define's lines or the two
# after; one whose define ended in a blank line changes nothing (benign).
import collections, json, os, re, shutil, sys

if sys.argv[1] == '--score':
    out = sys.argv[2]
    muts = json.load(open(out + '.json'))
    found = collections.defaultdict(list)
    for d in json.load(open(out + '.findings.json')):
        if d['rule'] in ('KJ001', 'KJ007'):
            found[os.path.basename(d['path'])].append(d)
    caught = elsewhere = benign = 0
    for name, path, a, b in muts:
        lines = open(os.path.join(out, name), errors='replace').read().split('\n')
        benign += lines[b - 1].strip() == ''
        caught += any(a <= d['line'] <= b + 2 for d in found[name])
        elsewhere += sum(not a <= d['line'] <= b + 2 for d in found[name])
    print(f'{len(muts)} mutations ({benign} benign): {caught} caught; '
          f'{elsewhere} KJ001/KJ007 findings away from the mutated define')
    sys.exit(0)
out = sys.argv[1]
corpus = sys.argv[2] if len(sys.argv) > 2 else '/work/corpus'
wide = sys.argv[3] if len(sys.argv) > 3 else None
shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
muts = []
for root, _, files in [x for c in (corpus, wide) if c for x in os.walk(c)]:
    for f in files:
        if not f.endswith(('.cu', '.cuh')): continue
        path = os.path.join(root, f)
        try: lines = open(path, encoding='utf-8', errors='surrogateescape').read().split('\n')
        except Exception: continue
        i = 0
        while i < len(lines):
            if re.match(r'\s*#\s*define\b', lines[i]) and lines[i].endswith('\\'):
                j = i
                while j < len(lines) and lines[j].endswith('\\'): j += 1
                # lines[i..j] is the define; lines[j-1] has the last '\'
                m = list(lines); m[j-1] = m[j-1][:-1].rstrip()
                name = f'm{len(muts)}.cu'
                open(os.path.join(out, name), 'w', encoding='utf-8', errors='surrogateescape').write('\n'.join(m))
                muts.append((name, path, i + 1, j + 1))
                i = j + 1
            else:
                i += 1
json.dump(muts, open(out + '.json', 'w'))
print(len(muts), 'mutations')
