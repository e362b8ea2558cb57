"""Compile every define set of the tuned table's rms_norm, conv1d and delta_rule entries, the defaults and
the CONV_SILU variant with the old (/tmp/cmp/old: kernel_src at 59aa65d) and the new kernel directory
through `kjit compile -o` (NVRTC's CUBIN, no cache); compare the CUBINs byte for byte."""
import subprocess, sys, tomllib, os, filecmp
kjit = "/work/main/build-py/tools/kjit"
table = tomllib.load(open("/work/main/kernel_src/tuned_h200.toml", "rb"))
sets = {("rms_norm", ()), ("conv1d", ()), ("conv1d", (("CONV_SILU", "0"),)), ("delta_rule", ())}
for e in table["entry"]:
    if e["kernel"] in ("rms_norm", "conv1d", "delta_rule"):
        sets.add((e["kernel"], tuple(sorted(e["defines"].items()))))
model = tomllib.load(open("/work/main/kernel_src/model.toml", "rb"))
print(len(sets), "define sets")
same = differ = 0
for i, (k, d) in enumerate(sorted(sets)):
    outs = []
    for tag in ("old", "new"):
        src = "/tmp/cmp/old" if tag == "old" else "/work/main/kernel_src"
        out = f"/tmp/cmp/{tag}-{i}.cubin"
        args = [kjit, "compile", k, "--src", src, "--no-cache", "-o", out]
        for n, v in d:
            args += ["-D", f"{n}={v}"]
        r = subprocess.run(args, capture_output=True, text=True, cwd="/work/main")
        if r.returncode:
            print("FAIL", tag, k, d, r.stderr[-300:]); sys.exit(1)
        outs.append(out)
    if filecmp.cmp(*outs, shallow=False):
        same += 1
    else:
        differ += 1; print("DIFFER", k, d)
print("same", same, "differ", differ)
