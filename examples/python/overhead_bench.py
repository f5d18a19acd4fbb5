#!/usr/bin/env python3
"""overhead_bench.py: the added cost of a cached `redistribute` called from Python over the same
C++ call (DistTensor::redistribute + synchronize in a C++ loop), per transition, on the backend
in use (a benchmark, not a test; issue 18's target: < 30 us added).

  launch/axe-run -np 4 python3 examples/python/overhead_bench.py [--iters 2000] [--elements 4096]
  launch/axe-run -np 2 python3 examples/python/overhead_bench.py --torch [--mib 1]

Each row: the best of 7 repeats of the mean time per call, slowest rank (the host is shared); "python" passes the
placement text each call, "python (layout)" a prepared axe.DistLayout.

--torch: torch CUDA tensors on the cuda backend (a global tensor of --mib MiB, f32), each call ordered with torch's
current stream by events (redistribute(stream=)), one stream synchronize after the loop, against the C++ call
DistTensor::redistribute(to, CallerStream) in the same loop; "added" is the Python cost per call. Transitions
whose GPU work takes longer than the host's enqueue are bound by the GPU on both sides (then "added" reads ~0);
R -> S(0) is a view (no GPU work): the host overhead alone.
"""
import argparse
import time

import numpy as np

import axe


def per_call(fn, iters):
    axe.barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters


def slowest(v):
    """The maximum over ranks (each rank's own value on its own partial term; host or cuda backend)."""
    m = axe.Mesh(gpu=axe.world_size())
    return float(axe.distribute(np.array([v]), m, axe.Partial("max"), src_rank=None).full_tensor()[0])


def torch_main(args):
    import torch
    axe.init(backend="cuda")
    n = axe.world_size()
    dev = torch.device("cuda", axe.local_rank() % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    mesh = axe.Mesh(gpu=n)
    rows = int(np.sqrt(args.mib * (1 << 20) / 4))
    x = torch.ones((rows, rows), dtype=torch.float32, device=dev)
    s = torch.cuda.current_stream(dev)
    h = s.cuda_stream
    if axe.rank() == 0:
        print("torch %s on the cuda backend, %d ranks, f32 %dx%d (%.1f MiB), %d iterations" % (
            torch.__version__, n, rows, rows, rows * rows * 4 / (1 << 20), args.iters))
        print("%-16s %10s %12s %22s %10s" % ("transition", "C++ us", "python us", "python(layout, int) us", "added us"))
    for src, dst in [("R", "S(0)"), ("S(0)", "S(1)"), ("S(0)", "R"), ("P", "R")]:
        t = axe.distribute(x, mesh, src, src_rank=None)
        to = axe.shard(x.shape, mesh, dst)
        t.redistribute(dst)  # plan once (cached afterwards)
        s.synchronize()

        def loop(fn):
            axe.barrier()
            t0 = time.perf_counter()
            for _ in range(args.iters):
                fn()
            s.synchronize()
            return (time.perf_counter() - t0) / args.iters

        res = {"cpp": [], "py": [], "pyh": []}
        for _ in range(7):
            axe.barrier()
            res["cpp"].append(t._t._bench_redistribute(to, args.iters, h))
            res["py"].append(loop(lambda: t.redistribute(dst, stream=s)))
            res["pyh"].append(loop(lambda: t.redistribute(to, stream=h)))
        cpp, py, pyh = (slowest(float(np.min(res[k]))) * 1e6 for k in ("cpp", "py", "pyh"))
        if axe.rank() == 0:
            print("%-16s %10.2f %12.2f %22.2f %10.2f" % (src + " -> " + dst, cpp, py, pyh, py - cpp))
    axe.finalize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--elements", type=int, default=4096, help="elements per rank (f32)")
    ap.add_argument("--torch", action="store_true", help="torch CUDA tensors on the cuda backend (see above)")
    ap.add_argument("--mib", type=float, default=1.0, help="--torch: size of the global tensor in MiB")
    args = ap.parse_args()
    if args.torch:
        return torch_main(args)
    axe.init()
    n = axe.world_size()
    mesh = axe.Mesh(dp=2, tp=n // 2) if n >= 4 and n % 2 == 0 else axe.Mesh(gpu=n)
    cases = [("S(0)", "S(1)"), ("S(0)", "R"), ("P", "R")] if mesh.ndim == 1 else \
        [("S(0),S(1)", "S(1),S(0)"), ("S(0),R", "R,S(0)"), ("R,P", "S(0),S(1)")]
    rows = int(np.sqrt(args.elements * n))
    x = np.ones((rows, rows), dtype=np.float32)
    if axe.rank() == 0:
        print("backend %s, %d ranks, mesh %s, f32 %dx%d, %d iterations" % (axe.backend(), n, mesh, rows, rows, args.iters))
        print("%-24s %12s %12s %16s %12s" % ("transition", "C++ us", "python us", "python(layout) us", "added us"))
    for src, dst in cases:
        t = axe.distribute(x, mesh, src, src_rank=None)
        to = axe.shard(x.shape, mesh, dst)
        t.redistribute(dst)  # plan once (cached afterwards)
        res = {"cpp": [], "py": [], "pyl": []}
        for _ in range(7):
            res["cpp"].append(t._t._bench_redistribute(to, args.iters))
            res["py"].append(per_call(lambda: t.redistribute(dst), args.iters))
            res["pyl"].append(per_call(lambda: t.redistribute(to), args.iters))
        cpp, py, pyl = (slowest(float(np.min(res[k]))) * 1e6 for k in ("cpp", "py", "pyl"))
        if axe.rank() == 0:
            print("%-24s %12.2f %12.2f %16.2f %12.2f" % (src + " -> " + dst, cpp, py, pyl, py - cpp))
    axe.finalize()


if __name__ == "__main__":
    main()
