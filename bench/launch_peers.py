"""Host cost per launch from Python of one empty kernel with two parameters (an int and a
pointer), every arm in this process: kjit's module (`import kjit`) on a CuPy array, on a torch
tensor (torch's current stream looked up per launch) and with an explicit stream; CuPy
RawKernel; cuda.core `launch`; a Triton kernel. Each arm: batches of `--batch` launches, a sync
after each batch (not timed; the launch queue never fills), per-launch median over the batches.
The arms run in turns (rounds, the order rotated each round) so that drift hits all alike.
The floor is measured in this process too: raw cuLaunchKernel from C++ (the module's
Function._raw_launches, 100 launches per Python call, nothing checked). kjit's C++ figures from
bench_launch in the same call (another process) come in as --kjit-us and --raw-us. Prints one line per arm and the ratios with their
targets (kjit/CuPy <= 0.8, kjit/cuda.core <= 0.8, kjit/Triton <= 0.3).
"""
import argparse
import os
import statistics
import tempfile
import time

SOURCE = r'''extern "C" __global__ void empty_k(int n, const float* p) {
    if (n < 0 && p) asm volatile("trap;");
}
'''


def host_us(launch, sync, batch, per_call=1):
    """Per-launch host time of one batch of `batch` launches, in microseconds (`per_call`: the
    launches one call of `launch` makes)."""
    t = time.perf_counter()
    for _ in range(batch // per_call):
        launch()
    us = (time.perf_counter() - t) / batch * 1e6
    sync()
    return us


def kjit_arms(workdir):
    import cupy as cp
    import torch
    import kjit
    with open(os.path.join(workdir, "empty.cu"), "w") as f:
        f.write(SOURCE)
    engine = kjit.Engine(device=0, src=workdir, cache_dir=os.path.join(workdir, "cache"))
    rows = engine.prepare([{"name": "empty"}], shape={})
    assert rows[0]["error"] is None, rows[0]["error"]
    fn = engine.function("empty", "empty_k")
    buf = cp.zeros(256, dtype=cp.float32)
    tbuf = torch.zeros(256, device="cuda")
    s = cp.cuda.Stream(non_blocking=True)
    sync = torch.cuda.synchronize
    return {
        # The floor in this process: raw cuLaunchKernel from C++, 100 per Python call.
        "raw cuLaunchKernel (C++, this process)": (
            lambda: fn._raw_launches(1, 32, 1, buf, count=100), sync, 100),
        "kjit (CuPy array, CuPy's stream)": (lambda: fn(1, 32, 1, buf), sync),
        "kjit (torch tensor, torch's stream)": (lambda: fn(1, 32, 1, tbuf), sync),
        "kjit (CuPy array, stream=)": (lambda: fn(1, 32, 1, buf, stream=s), s.synchronize),
    }


def cupy_arm():
    import cupy as cp
    k = cp.RawKernel(SOURCE, "empty_k")
    buf = cp.zeros(256, dtype=cp.float32)
    n = cp.int32(1)
    return {"CuPy RawKernel": (lambda: k((1,), (32,), (n, buf)), cp.cuda.Device().synchronize)}


def cuda_core_arm():
    try:
        from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
    except ImportError:
        from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch
    import numpy as np
    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    arch = "".join(str(x) for x in dev.compute_capability)
    prog = Program(SOURCE, code_type="c++", options=ProgramOptions(arch=f"sm_{arch}"))
    kernel = prog.compile("cubin", name_expressions=()).get_kernel("empty_k")
    buf = dev.allocate(1024, stream=stream)
    cfg = LaunchConfig(grid=1, block=32)
    n = np.int32(1)
    return {"cuda.core launch": (lambda: launch(stream, cfg, kernel, n, buf), stream.sync)}


def triton_arm():
    import torch
    import triton

    @triton.jit
    def empty_k(n, p):
        pass

    buf = torch.zeros(256, device="cuda")
    return {"Triton": (lambda: empty_k[(1,)](1, buf, num_warps=1), torch.cuda.synchronize)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kjit-us", type=float, help="kjit's C++ checked launch (bench_launch)")
    ap.add_argument("--raw-us", type=float, help="raw cuLaunchKernel (bench_launch)")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--batches", type=int, default=10, help="per arm per round")
    a = ap.parse_args()
    arms = {}
    with tempfile.TemporaryDirectory() as workdir:
        for make in (lambda: kjit_arms(workdir), cupy_arm, cuda_core_arm, triton_arm):
            try:
                arms.update(make())
            except Exception as e:  # report, do not hide: the other arms still run
                print(f"{getattr(make, '__name__', 'kjit_arms')}: not measured: "
                      f"{type(e).__name__}: {e}")
        arms = {name: arm if len(arm) == 3 else (*arm, 1) for name, arm in arms.items()}
        for launch, sync, per_call in arms.values():  # warm-up: first calls compile, load
            for _ in range(3):
                host_us(launch, sync, 100, per_call)
        per = {name: [] for name in arms}
        names = list(arms)
        for r in range(a.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                launch, sync, per_call = arms[name]
                per[name] += [host_us(launch, sync, a.batch, per_call) for _ in range(a.batches)]
    med = {name: statistics.median(v) for name, v in per.items()}
    print(f"host cost per launch from Python, empty kernel with 2 parameters: median over "
          f"{a.rounds * a.batches} batches of {a.batch} launches (a sync after each batch)")
    for name, v in per.items():
        q = statistics.quantiles(v, n=4)
        print(f"  {name:38} {med[name]:7.3f} us  [q1 {q[0]:.3f} .. q3 {q[2]:.3f}]")
    if a.raw_us:
        print(f"  {'C++ raw cuLaunchKernel (bench_launch)':38} {a.raw_us:7.3f} us")
    if a.kjit_us:
        print(f"  {'C++ kjit checked launch (bench_launch)':38} {a.kjit_us:7.3f} us")
    kj = [n for n in med if n.startswith("kjit (CuPy array, CuPy")]
    if kj:
        k = med[kj[0]]
        for peer, target in (("CuPy RawKernel", 0.8), ("cuda.core launch", 0.8), ("Triton", 0.3)):
            if peer in med:
                r = k / med[peer]
                print(f"kjit/{peer}: {r:.3f} (target <= {target}) "
                      f"{'met' if r <= target else 'MISSED'}")
        floor = med.get("raw cuLaunchKernel (C++, this process)")
        if floor:
            for name in med:
                if not name.startswith("raw"):
                    print(f"  over the floor in this process: {name:38} +{med[name] - floor:.3f} us")


if __name__ == "__main__":
    main()
