#!/usr/bin/env python3
"""overhead_bench.py: the added cost of a cached `redistribute` called from Python over the same
C++ call (DistTensor::redistribute + synchronize in a C++ loop), per transition, on the backend
in use (a benchmark, not a test; issue 18's target: < 30 us added).

  launch/axe-run -np 4 python3 examples/python/overhead_bench.py [--iters 2000] [--elements 4096]

Each row: the best of 7 repeats of the mean time per call, slowest rank (the host is shared); "python" passes the
placement text each call, "python (layout)" a prepared axe.DistLayout.
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
    return axe.from_local(np.array([v]), axe.Mesh(gpu=axe.world_size()), axe.Partial("max"), shape=(1,)).full_tensor()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--elements", type=int, default=4096, help="elements per rank (f32)")
    args = ap.parse_args()
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
