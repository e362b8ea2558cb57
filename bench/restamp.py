"""Carries tuned entries over a kernel source change that leaves their launched function's machine
code as it was.

A tuned entry names the source it was measured on (`source`, a hash of the kernel file and its
headers); `kjit audit` reports an entry as stale once the file changes. When a change touches one
function of a file (one kernel of several), the entries of the others were measured on code that
has not changed: this compiles each stale entry's defines from the old revision and from the
working tree, compares the launched function's sections of the two CUBINs (its code, its
register count, its .nv.info attributes, constants, relocations and shared memory) and, where
every byte is the same, writes the new source hash into the entry. Entries whose function did
change are listed and left stale: re-run `kjit tune` for them.

  python3 bench/restamp.py REV [--table kernel_src/tuned.toml] [--src kernel_src]
      [--kjit build/tools/kjit] [--dry-run]

REV is the revision the stale entries were measured on (a git revision of this repository). The
launched function is `<contract or kernel>_<dtype>` (conv1d_update_bf16), as kjit's contracts
name their entry points.
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile
import tomllib


def function_sections(cubin: bytes, fun: str) -> dict:
    """The sections of an ELF64 CUBIN that belong to `fun` (named `<section>.<fun>`), each as
    (type, flags, size, info, contents); info of `.text.<fun>` carries the register count."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not an ELF64 CUBIN")
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx]

    def name(h):
        start = names[4] + h[0]
        return cubin[start:cubin.index(b"\0", start)].decode()

    out = {}
    for h in headers:
        n = name(h)
        if n.endswith("." + fun):
            kind, flags, _, offset, size, _, info = h[1], h[2], h[3], h[4], h[5], h[6], h[7]
            body = b"" if kind == 8 else cubin[offset:offset + size]  # SHT_NOBITS: no bytes
            out[n] = (kind, flags, size, info, body)
    return out


_compiled = {}


def compile_cubin(kjit: str, src: str, kernel: str, defines: dict, path: str) -> bytes:
    """The CUBIN of `kernel` from `src` at `defines`, compiled once per define set (the entries
    of each dtype at one define set share it)."""
    key = (src, kernel, tuple(sorted(defines.items())))
    if key not in _compiled:
        _compiled[key] = _compile(kjit, src, kernel, defines, path)
    return _compiled[key]


def _compile(kjit: str, src: str, kernel: str, defines: dict, path: str) -> bytes:
    args = [kjit, "compile", kernel, "--src", src, "--no-cache", "-o", path]
    for k, v in sorted(defines.items()):
        args += ["-D", f"{k}={v}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{r.stdout}{r.stderr}")
    with open(path, "rb") as f:
        return f.read()


def stale_entries(kjit: str, src: str, table: str) -> dict:
    """`kjit audit`'s stale-entry findings for `table`: line of the entry -> (old, new) hash."""
    r = subprocess.run([kjit, "audit", "--src", src], capture_output=True, text=True)
    pattern = re.compile(re.escape(os.path.basename(table)) +
                         r":(\d+):\d+: error: tuned entry .* was recorded for source "
                         r"([0-9a-f]+), and the source is ([0-9a-f]+) now")
    found = {}
    for line in (r.stdout + r.stderr).splitlines():
        m = pattern.search(line)
        if m:
            found[int(m.group(1))] = (m.group(2), m.group(3))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev")
    ap.add_argument("--table", default="kernel_src/tuned.toml")
    ap.add_argument("--src", default="kernel_src")
    ap.add_argument("--kjit", default="build/tools/kjit")
    ap.add_argument("--dry-run", action="store_true", help="report, write nothing")
    a = ap.parse_args()

    stale = stale_entries(a.kjit, a.src, a.table)
    if not stale:
        print("restamp: no stale entry in", a.table)
        return 0
    lines = open(a.table).read().split("\n")
    # Entry starts (1-based line of each `[[entry]]`), in order, to pair with the parsed entries.
    starts = [i + 1 for i, l in enumerate(lines) if l.strip() == "[[entry]]"]
    entries = tomllib.loads("\n".join(lines))["entry"]
    if len(starts) != len(entries):
        print("restamp: cannot pair the table's [[entry]] lines with its entries", file=sys.stderr)
        return 2
    same, changed = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        old_src = os.path.join(tmp, "old")
        os.makedirs(old_src)
        prefix = os.path.relpath(os.path.abspath(a.src), subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
            check=True).stdout.strip())
        archive = subprocess.run(["git", "archive", a.rev, prefix], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", old_src, "--strip-components",
                        str(len(prefix.split(os.sep)))], input=archive.stdout, check=True)
        for start, e in zip(starts, entries):
            if start not in stale:
                continue
            old_hash, new_hash = stale[start]
            fun = f"{e.get('contract', e['kernel'])}_{e['dtype']}"
            what = f"{a.table}:{start}: {fun} " + ",".join(f"{k}={v}" for k, v in e["shape"].items())
            old = function_sections(compile_cubin(a.kjit, old_src, e["kernel"], e["defines"],
                                                  os.path.join(tmp, "old.cubin")), fun)
            new = function_sections(compile_cubin(a.kjit, a.src, e["kernel"], e["defines"],
                                                  os.path.join(tmp, "new.cubin")), fun)
            if not old or ".text." + fun not in old:
                raise RuntimeError(f"{what}: the old CUBIN has no function {fun}")
            if old != new:
                differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
                changed.append(f"{what}: changed ({', '.join(differ)})")
                continue
            # The entry's own `source = "..."` line, between its start and the next entry.
            for i in range(start, len(lines)):
                if lines[i].strip() == "[[entry]]":
                    raise RuntimeError(f"{what}: no source line")
                if lines[i] == f'source = "{old_hash}"':
                    lines[i] = f'source = "{new_hash}"'
                    break
            same += 1
    for c in changed:
        print(c)
    print(f"restamp: {same} entr{'y' if same == 1 else 'ies'} with the same machine code "
          f"restamped, {len(changed)} changed (re-run kjit tune for them)")
    if not a.dry_run and same:
        with open(a.table, "w") as f:
            f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
