"""A B B A of conv1d_cl's defaults (L16 S1 B64) without and with the eager first-tile loads at
every shape of bench/grids/conv1d_cl.toml, bias+silu, one kjit bench process per shape:
--flush-l2 --graph --pairs 3 --reps 15. B/A is a ratio of times: < 1, the eager loads are faster."""
import itertools, subprocess, sys, tomllib

grid = tomllib.load(open("bench/grids/conv1d_cl.toml", "rb"))
for dtype in sys.argv[1:]:
    for b, c, t in itertools.product(grid["b"], grid["c"], grid["t"]):
        shape = f"b={b},c={c},t={t}"
        args = ["build-py/tools/kjit", "bench", "conv1d_cl", "--src", "kernel_src", "--dtype", dtype,
                "--shape", shape, "--flush-l2", "--graph", "--pairs", "3", "--reps", "15",
                "-D", "CONV_SILU=1", "-D", "CONV_CL_EAGER=0", "--vs", "CONV_CL_EAGER=1"]
        r = subprocess.run(args, capture_output=True, text=True)
        keep = [l.strip() for l in r.stdout.splitlines() + r.stderr.splitlines()
                if l.strip().startswith(("A:", "B:", "ratio", "kjit:"))]
        print(f"== {dtype} {shape} rc {r.returncode}", *keep, sep="\n  ", flush=True)
