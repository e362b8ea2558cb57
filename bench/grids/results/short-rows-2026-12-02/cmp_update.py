"""The conv1d_update entries' kernels after conv1d's per-lane vector change: every define set of
the tuned table's conv1d_update entries compiled from the previous (OLD_SRC) and the new kernel
directory through `kjit compile -o` (NVRTC's CUBIN, no cache); the SASS of conv1d_update_f32 and
conv1d_update_bf16 (cuobjdump -sass -fun) compared as text. Usage: python3 cmp_update.py OLD_SRC CUOBJDUMP"""
import subprocess, sys, tomllib
kjit = "build-py/tools/kjit"
old_src, cuobjdump = sys.argv[1], sys.argv[2]
table = tomllib.load(open("kernel_src/tuned_h200.toml", "rb"))
sets = {tuple(sorted(e["defines"].items())) for e in table["entry"]
        if e["kernel"] == "conv1d" and e.get("contract") == "conv1d_update"}
print(len(sets), "define sets")
same = differ = 0
for i, d in enumerate(sorted(sets)):
    sass = []
    for tag, src in (("old", old_src), ("new", "kernel_src")):
        out = f"/tmp/cmp/upd-{tag}-{i}.cubin"
        args = [kjit, "compile", "conv1d", "--src", src, "--no-cache", "-o", out]
        for n, v in d:
            args += ["-D", f"{n}={v}"]
        subprocess.run(args, capture_output=True, text=True, check=True)
        text = ""
        for fn in ("conv1d_update_f32", "conv1d_update_bf16"):
            r = subprocess.run([cuobjdump, "-sass", "-fun", fn, out], capture_output=True, text=True, check=True)
            body = [l for l in r.stdout.splitlines() if "/*" in l]  # the instructions
            if len(body) < 10:
                sys.exit(f"no SASS for {fn} in {out}")
            text += "\n".join(body)
        sass.append(text)
    if sass[0] == sass[1]:
        same += 1
    else:
        differ += 1
        print("DIFFER", d)
print("same", same, "differ", differ)
