#!/usr/bin/env python3
"""Lists the __global__ function definitions of .cu/.cuh files: path, line, name, one a line.

Comments, string and character literals (raw strings included) and preprocessor directives
(a kernel written inside a #define is not a definition until expanded) are skipped; a
definition is `__global__`, then a declarator whose `)` is followed by a `{` before any `;`.
Usage: bench/global_defs.py DIR..."""
import os
import re
import sys


def code_only(text):
    """text with comments, literals and directive lines blanked, newlines kept."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in ' \t':
            out.append(c)
            i += 1
            continue
        if line_start and c == '#':
            while i < n and text[i] != '\n':  # a directive, continuation lines included
                if text[i] == '\\' and i + 1 < n and text[i + 1] == '\n':
                    out.append('\n')
                    i += 2
                    continue
                i += 1
            continue
        line_start = c == '\n'
        if text.startswith('//', i):
            while i < n and text[i] != '\n':
                i += 1
            continue
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * text.count('\n', i, j))
            i = j
            continue
        m = re.compile(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            j = text.find(')' + m.group(1) + '"', m.end())
            j = n if j < 0 else j + len(m.group(1)) + 2
            out.append('""' + '\n' * text.count('\n', i, j))
            i = j
            continue
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out)


# CUTLASS_GLOBAL is CUTLASS's spelling of __global__ (DeepGEMM writes its kernels with it).
GLOBAL = re.compile(r'\b(?:__global__|CUTLASS_GLOBAL)\b')
CALL = re.compile(r'([A-Za-z_]\w*)\s*\(|[;{}]')
ATTRIBUTES = ('__launch_bounds__', '__attribute__', 'alignas', '__align__', '__declspec',
              '__maxnreg__', '__cluster_dims__')


def close(code, j):
    """The index after the ')' that closes the '(' before j."""
    depth = 1
    while j < len(code) and depth:
        depth += {'(': 1, ')': -1}.get(code[j], 0)
        j += 1
    return j


def definitions(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        code = code_only(f.read())
    for g in GLOBAL.finditer(code):
        pos, name = g.end(), None
        while True:
            m = CALL.search(code, pos)
            if not m or m.group(1) is None:
                break
            # An attribute, or a macro in capitals that spells one (FOO_LAUNCH_BOUNDS(n)).
            if m.group(1) in ATTRIBUTES or re.fullmatch(r'[A-Z][A-Z0-9_]*', m.group(1)):
                pos = close(code, m.end())
                continue
            name = m.group(1)
            pos = close(code, m.end())
            break
        if name is None:
            continue
        k = pos
        while k < len(code) and code[k] not in ';{':
            k += 1
        if k < len(code) and code[k] == '{':
            yield code.count('\n', 0, g.start()) + 1, name


for root in sys.argv[1:]:
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if f.endswith(('.cu', '.cuh')):
                p = os.path.join(dirpath, f)
                for line, name in definitions(p):
                    print(f'{p}\t{line}\t{name}')
