"""Restamp the tuned entries of one kernel whose CUBIN a source change leaves byte-identical:
every define set of KERNEL's entries compiled (`kjit compile --no-cache -o`, NVRTC) from OLD_SRC
and from kernel_src; where the two CUBINs are equal the entry's `source` hash becomes NEW_HASH,
the others are listed (they need a re-tune). NEW_HASH: the source hash `kjit audit` names in its
tuned findings ("the source is ... now"). Usage (project root):
  python3 restamp.py KERNEL OLD_SRC NEW_HASH [--write]"""
import filecmp
import os
import re
import subprocess
import sys
import tempfile
import tomllib

kernel, old_src, new_hash = sys.argv[1:4]
fun = sys.argv[sys.argv.index("--fun") + 1] if "--fun" in sys.argv else None


def sass(cubin, name):
    text = subprocess.run(["cuobjdump", "-sass", "-fun", name, cubin], check=True,
                          capture_output=True, text=True).stdout
    lines = [l for l in text.splitlines() if "/*" in l]  # the instructions, not the file's name
    if not lines:
        sys.exit(f"restamp.py: no SASS for {name} in {cubin}")
    return lines


path = "kernel_src/tuned_h200.toml"
text = open(path).read()
blocks = re.split(r"(?=^\[\[entry\]\]$)", text, flags=re.M)
tmp = tempfile.mkdtemp()
same, differ, out = 0, [], []
for block in blocks:
    if block.startswith("[[entry]]") and f'kernel = "{kernel}"' in block:
        e = tomllib.loads(block)["entry"][0]
        cubins = []
        for tag, src in (("old", old_src), ("new", "kernel_src")):
            f = os.path.join(tmp, f"{tag}.cubin")
            args = ["build-py/tools/kjit", "compile", kernel, "--src", src, "--no-cache", "-o", f]
            for n, v in sorted(e["defines"].items()):
                args += ["-D", f"{n}={v}"]
            subprocess.run(args, check=True, capture_output=True)
            cubins.append(f)
        if filecmp.cmp(*cubins, shallow=False) or (
                fun and sass(cubins[0], fun.format(dtype=e["dtype"])) ==
                sass(cubins[1], fun.format(dtype=e["dtype"]))):
            same += 1
            block = re.sub(r'^source = "[0-9a-f]+"$', f'source = "{new_hash}"', block, flags=re.M)
        else:
            differ.append((e["dtype"], e["shape"], e["defines"]))
    out.append(block)
print(f"{kernel}: {same} entries byte-identical, {len(differ)} differ")
for d in differ:
    print("  differ:", *d)
if "--write" in sys.argv:
    open(path, "w").write("".join(out))
