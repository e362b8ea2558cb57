"""kjit.plan's grids against the formulas bench/peers_grid.py computed in Python before it
launched through the plan (no GPU): conv1d (rows' segments walked by warps), conv1d_update and
rms_norm (block or warp rows). Prints the number of cases and how many differ.
Usage (project root): PYTHONPATH=build-py/python python3 bench/grids/results/plan-2026-12-04/geometry_check.py"""
import itertools

import kjit

bad = n = 0
for dtype in ("f32", "bf16"):
    for b, c, t in itertools.product((1, 3, 32), (7, 1024, 8192), (1, 61, 64, 512, 1300, 8192)):
        for tile, block, segs in itertools.product((4, 8, 16, 32), (32, 64, 256, 1024), (0, 1, 2, 4, 8)):
            d = {"CONV_TILE": str(tile), "CONV_BLOCK": str(block), "CONV_SEGS": str(segs)}
            s = segs or (4 if dtype == "bf16" else 1)
            warps = -(-(b * c * -(-t // (32 * tile))) // s)
            grid = -(-(warps * 32) // block)
            try:
                step = kjit.plan("conv1d", {"b": b, "c": c, "t": t}, dtype, d)["steps"][0]
            except kjit.ConfigError:
                continue  # a case the contract refuses
            n += 1
            if step["grid"] != (grid, 1, 1) or step["block"] != (block, 1, 1):
                bad += 1
                print("conv1d", dtype, b, c, t, d, step["grid"], grid)
    for b, c in itertools.product((1, 3, 64), (7, 1024, 8192)):
        for block in (32, 64, 128, 256, 1024):
            step = kjit.plan("conv1d_update", {"b": b, "c": c}, dtype, {"CONV_BLOCK": str(block)})["steps"][0]
            n += 1
            if step["grid"] != (-(-(b * c) // block), 1, 1):
                bad += 1
                print("conv1d_update", b, c, block, step)
for rows, width in itertools.product((1, 7, 333, 32768), (8, 1000, 7168)):
    for block, warp_rows in itertools.product((32, 64, 256, 1024), (0, 1, 2, 3)):
        per = block // 32 * warp_rows or 1
        d = {"RMS_BLOCK": str(block), "RMS_WARP_ROWS": str(warp_rows)}
        step = kjit.plan("rms_norm", {"rows": rows, "n": width}, "bf16", d)["steps"][0]
        n += 1
        if step["grid"] != (-(-rows // per), 1, 1):
            bad += 1
            print("rms_norm", rows, width, d, step["grid"])
print(n, "cases,", bad, "differ")
