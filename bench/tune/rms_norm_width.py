"""Writes bench/tune/rms_norm_width/DTYPE-ROWSxN.sweep.toml for each rms_norm entry of the tuned
table at up to 256 rows: the entry's defines fixed, RMS_N swept over 0 (the width at run time,
the baseline) and the shape's n (compiled in). `kjit sweep FILE --record TABLE` then keeps the
entry's pick unless the compiled-in width is faster by more than the noise. Usage (from the
project root): python3 bench/tune/rms_norm_width.py [TABLE]"""
import os
import sys
import tomllib

table = sys.argv[1] if len(sys.argv) > 1 else "kernel_src/tuned.toml"
out = os.path.join(os.path.dirname(__file__), "rms_norm_width")
with open(table, "rb") as f:
    entries = tomllib.load(f)["entry"]
for e in entries:
    if e["kernel"] != "rms_norm" or e["shape"]["rows"] > 256:
        continue
    rows, n = e["shape"]["rows"], e["shape"]["n"]
    defines = {k: v for k, v in e["defines"].items() if k != "RMS_N"}
    path = os.path.join(out, f"{e['dtype']}-{rows}x{n}.sweep.toml")
    with open(path, "w") as f:
        f.write(f"""# Written by bench/tune/rms_norm_width.py: the tuned entry's defines at {e['dtype']} {rows} x {n},
# with the row width compiled in (RMS_N = {n}) against the width at run time (0, the baseline).
kernel = "rms_norm"
dtype = "{e['dtype']}"

[shape]
rows = {rows}
n = {n}

[defines]
""" + "".join(f"{k} = {v}\n" for k, v in sorted(defines.items())) + f"""
[sweep]
RMS_N = [0, {n}]

[check]
mode = "digest"
baseline = {{ RMS_N = 0 }}

[bench]
warmup = 5
reps = 30
flush_l2 = true
""")
    print(path)
