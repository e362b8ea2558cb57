"""Restamp the tuned entries of one kernel whose CUBIN a source change leaves byte-identical:
every define set of KERNEL's entries compiled (`kjit compile --no-cache -o`, NVRTC) from OLD_SRC
and from kernel_src; where the two CUBINs are equal the entry's `source` hash becomes NEW_HASH,
the others are listed (they need a re-tune). NEW_HASH: the source hash `kjit audit` names in its
tuned findings ("the source is ... now"). With `--fun NAME` (`{dtype}` in it becomes the entry's
dtype, e.g. `rms_norm_{dtype}`), an entry whose CUBINs differ still counts as unchanged where the
function it launches is: the same SASS and the same resource usage (registers, stack, shared
memory), by cuobjdump (with nvdisasm, on PATH). A change to the other dtype's code leaves this
one's machine code as it was. Usage (project root):
  python3 restamp.py KERNEL OLD_SRC NEW_HASH [--fun NAME] [--write]"""
import filecmp
import os
import re
import subprocess
import sys
import tempfile
import tomllib

kernel, old_src, new_hash = sys.argv[1:4]
fun = None
if "--fun" in sys.argv:
    if sys.argv.index("--fun") + 1 == len(sys.argv):
        sys.exit("restamp.py: --fun needs a function name, e.g. 'rms_norm_{dtype}'")
    fun = sys.argv[sys.argv.index("--fun") + 1]


def machine_code(cubin, name):
    """The function's SASS instructions and its resource usage line, without the file's name."""
    def run(*args):
        return subprocess.run(["cuobjdump", *args, "-fun", name, cubin], check=True,
                              capture_output=True, text=True).stdout.splitlines()
    lines = [l for l in run("-sass") if "/*" in l]
    if not lines:
        sys.exit(f"restamp.py: no SASS for {name} in {cubin}")
    return lines + [l for l in run("-res-usage") if "REG:" in l]


path = "kernel_src/tuned_h200.toml"
text = open(path).read()
blocks = re.split(r"(?=^\[\[entry\]\]$)", text, flags=re.M)
tmp = tempfile.mkdtemp()
same, same_fun, differ, out = 0, 0, [], []
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
        name = fun.format(dtype=e["dtype"]) if fun else None
        if filecmp.cmp(*cubins, shallow=False):
            same += 1
        elif name and machine_code(cubins[0], name) == machine_code(cubins[1], name):
            same_fun += 1
        else:
            differ.append((e["dtype"], e["shape"], e["defines"]))
            out.append(block)
            continue
        block = re.sub(r'^source = "[0-9a-f]+"$', f'source = "{new_hash}"', block, flags=re.M)
    out.append(block)
print(f"{kernel}: {same} entries byte-identical, {same_fun} with the same machine code in the "
      f"function they launch, {len(differ)} differ")
for d in differ:
    print("  differ:", *d)
if "--write" in sys.argv:
    open(path, "w").write("".join(out))
