#!/usr/bin/env python3
"""dtensor_bench: the reshard_bench transitions with PyTorch DTensor (issue 5).

    torchrun --nproc_per_node 2 examples/dtensor_bench.py [--sizes 1M,16M,256M,1G]
        [--dtypes f32,bf16] [--transitions S0-R,...] [--iters 20] [--warmup 3] [--json FILE]

(or mpirun -np N python3 examples/dtensor_bench.py ... with MASTER_ADDR / MASTER_PORT set).

Same shapes and timing method as reshard_bench: global shape rows x 4096 (rows = size / dtype
size / 4096, at least 16); uneven cases (rows+1) x 4095. For each case: the source DTensor is
built once, then `redistribute(mesh, dst_placements)` runs --warmup times untimed and --iters
times timed: barrier, CUDA event, redistribute (and wait for the result's collective), CUDA
event, synchronize. An iteration's time is the slowest rank's; the median is reported. CPU
overhead: host time of the redistribute call, median, slowest rank. The 2x2 mesh transitions
need 4 ranks (skipped otherwise); the interleaved Axe layout has no DTensor equivalent.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

S0, S1, R, P = Shard(0), Shard(1), Replicate(), Partial()
# name, label (as reshard_bench), 2-D, uneven, from, to
TRANSITIONS = [
    ("S0-R", "S0->R", False, False, [S0], [R]),
    ("S1-R", "S1->R", False, False, [S1], [R]),
    ("S0-S1", "S0->S1", False, False, [S0], [S1]),
    ("S1-S0", "S1->S0", False, False, [S1], [S0]),
    ("R-S1", "R->S1", False, False, [R], [S1]),
    ("P-R", "P->R", False, False, [P], [R]),
    ("P-S0", "P->S0", False, False, [P], [S0]),
    ("P-S1", "P->S1", False, False, [P], [S1]),
    ("U-S0-R", "S0->R uneven", False, True, [S0], [R]),
    ("U-S0-S1", "S0->S1 uneven", False, True, [S0], [S1]),
    ("2D-S0S1-RR", "(S0,S1)->(R,R)", True, False, [S0, S1], [R, R]),
    ("2D-S0S1-S1S0", "(S0,S1)->(S1,S0)", True, False, [S0, S1], [S1, S0]),
    ("2D-S0R-RS0", "(S0,R)->(R,S0)", True, False, [S0, R], [R, S0]),
    ("2D-S0S0-S1S1", "(S0,S0)->(S1,S1)", True, False, [S0, S0], [S1, S1]),
    ("2D-RP-S0S1", "(R,P)->(S0,S1)", True, False, [R, P], [S0, S1]),
]
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def parse_size(s):
    u = s.upper().rstrip("B").rstrip("I")
    mul = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(u[-1:], 1)
    num = u[:-1] if u[-1:] in "KMG" else u
    return int(float(num) * mul)


def human(n):
    for unit, v in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= v:
            return f"{n / v:g}{unit}"
    return str(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1M,16M,256M,1G")
    ap.add_argument("--dtypes", default="f32,bf16")
    ap.add_argument("--transitions", default="")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json", default="")
    a = ap.parse_args()

    # torchrun sets RANK/WORLD_SIZE/LOCAL_RANK; under mpirun take Open MPI's.
    env = os.environ
    if "RANK" not in env and "OMPI_COMM_WORLD_RANK" in env:
        env["RANK"] = env["OMPI_COMM_WORLD_RANK"]
        env["WORLD_SIZE"] = env["OMPI_COMM_WORLD_SIZE"]
        env["LOCAL_RANK"] = env.get("OMPI_COMM_WORLD_LOCAL_RANK", env["RANK"])
        env.setdefault("MASTER_ADDR", "127.0.0.1")
        env.setdefault("MASTER_PORT", "29511")
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    if not torch.cuda.is_available():
        print("dtensor_bench: no CUDA GPU visible, nothing to measure")
        return 77
    local_rank = int(env.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    dev = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group("nccl", device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()
    sizes = [parse_size(s) for s in a.sizes.split(",") if s]
    dtypes = [d for d in a.dtypes.split(",") if d]
    want = set(t for t in a.transitions.split(",") if t)
    mesh1 = init_device_mesh("cuda", (world,), mesh_dim_names=("gpu",))
    mesh2 = init_device_mesh("cuda", (2, 2), mesh_dim_names=("x", "y")) if world == 4 else None
    if rank == 0:
        print(f"dtensor_bench: {world} rank(s), {torch.cuda.get_device_name()}, torch {torch.__version__}, "
              f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, {a.iters} timed iterations (median), "
              f"{a.warmup} warm-up")
        print(f"\n{'transition':22} {'type':4} {'size':>5} {'ms':>10} {'algbw':>9} {'cpu us':>8}")
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    results = []
    for name, label, two_d, uneven, src_pl, dst_pl in TRANSITIONS:
        if want and name not in want:
            continue
        if two_d and mesh2 is None:
            if rank == 0:
                print(f"skip {label}: the 2x2 mesh needs 4 ranks, this run has {world}")
            continue
        mesh = mesh2 if two_d else mesh1
        for dname in dtypes:
            dt = DTYPES[dname]
            es = torch.tensor([], dtype=dt).element_size()
            for size in sizes:
                rows = max(size // es // 4096, 16)
                shape = (rows + 1, 4095) if uneven else (rows, 4096)
                rec = {"transition": label, "dtype": dname, "size": size, "bytes": shape[0] * shape[1] * es}
                try:
                    g = torch.Generator(device=dev)
                    g.manual_seed(1234 + (rank if any(isinstance(p, Partial) for p in src_pl) else 0))
                    full = torch.rand(shape, device=dev, dtype=torch.float32, generator=g).to(dt)
                    if any(isinstance(p, Partial) for p in src_pl):
                        # Every rank's term is a full tensor; non-partial axes replicate it.
                        x = DTensor.from_local(full, mesh, src_pl, run_check=False)
                    else:
                        x = distribute_tensor(full, mesh, src_pl)
                    del full

                    def once():
                        y = x.redistribute(mesh, dst_pl).to_local()
                        if hasattr(y, "wait"):  # functional collectives: AsyncCollectiveTensor
                            y = y.wait()
                        return y

                    for _ in range(a.warmup):
                        once()
                    torch.cuda.synchronize()
                    ms, us = [], []
                    for _ in range(a.iters):
                        dist.barrier(device_ids=[dev.index])
                        torch.cuda.synchronize()
                        e0.record()
                        h0 = time.perf_counter()
                        y = once()
                        h1 = time.perf_counter()
                        e1.record()
                        torch.cuda.synchronize()
                        ms.append(e0.elapsed_time(e1))
                        us.append((h1 - h0) * 1e6)
                        del y
                    t = torch.tensor([ms, us], device=dev, dtype=torch.float64)
                    dist.all_reduce(t, op=dist.ReduceOp.MAX)
                    rec["ms"] = statistics.median(t[0].tolist())
                    rec["cpu_us"] = statistics.median(t[1].tolist())
                    rec["algbw_gbps"] = rec["bytes"] / (rec["ms"] * 1e-3) / 1e9
                    del x
                except Exception as ex:  # a transition DTensor cannot do: record why
                    rec["error"] = f"{type(ex).__name__}: {ex}"[:300]
                torch.cuda.empty_cache()
                results.append(rec)
                if rank == 0:
                    if "error" in rec:
                        print(f"{label:22} {dname:4} {human(size):>5} error: {rec['error']}")
                    else:
                        print(f"{label:22} {dname:4} {human(size):>5} {rec['ms']:10.4f} "
                              f"{rec['algbw_gbps']:8.1f}G {rec['cpu_us']:8.1f}", flush=True)
    if rank == 0 and a.json:
        with open(a.json, "w") as f:
            json.dump({"tool": "torch DTensor", "torch": torch.__version__, "ranks": world,
                       "device": torch.cuda.get_device_name(), "iters": a.iters, "warmup": a.warmup,
                       "results": results}, f, indent=1)
    dist.barrier(device_ids=[dev.index])
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
