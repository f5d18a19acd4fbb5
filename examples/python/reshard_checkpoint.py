#!/usr/bin/env python3
"""reshard_checkpoint.py: a tensor saved sharded on N ranks, loaded on M ranks in other placements.

  launch/axe-run -np 4 python3 examples/python/reshard_checkpoint.py save DIR [--shape 10,6] [--placements "S(0)"]
  launch/axe-run -np 2 python3 examples/python/reshard_checkpoint.py load DIR [--placements "S(1)"]

save: every rank writes its local storage buffer (DIR/shard-<rank>.npy, padding included) and
rank 0 the metadata (DIR/meta.json: shape, dtype, the Axe layout and the mesh), for a seeded
global tensor. load on M ranks: the files become one distributed tensor without reading any
shard twice, then `redistribute` moves it to the wanted placements on gpu=M:
  * N <= M: the saved mesh on ranks 0..N-1 (rank r loads shard-r.npy, the others hold nothing),
    a cross-mesh redistribution;
  * N > M, M dividing N, a 1-D saved mesh: rank r loads shards r, r+M, r+2M, ... back to back,
    and the saved layout is rewritten so that device index i = j*M + r becomes (memory block j,
    device r): an Axe layout with part of the old device axis on memory, which placements cannot
    express.
Each loaded shard is checked against the regenerated global tensor; exit status 1 on a mismatch.
"""
import argparse
import json
import os
import sys

import numpy as np

import axe


def global_tensor(shape, dtype):
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape).astype(dtype)


def save(d, shape, placements):
    mesh = axe.Mesh(gpu=axe.world_size())
    x = global_tensor(shape, np.float32)
    t = axe.distribute(x, mesh, placements, src_rank=None)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "shard-%d.npy" % axe.rank()), t.local_buffer)
    if axe.rank() == 0:
        with open(os.path.join(d, "meta.json"), "w", encoding="utf-8") as f:
            json.dump({"shape": list(shape), "dtype": "f32", "layout": str(t.layout), "mesh": str(t.mesh),
                       "placements": placements}, f)
    axe.barrier()
    if axe.rank() == 0:
        print("saved %s %s as %s on %s (%d files)" % (tuple(shape), placements, t.layout, t.mesh, mesh.size))


def stacked_layout(layout, n, m, elements):
    """The saved 1-D layout over N devices, as held by M ranks that each loaded shards r, r+M, ...
    back to back (`elements` per shard): device index i = j*M + r -> memory block j, device r."""
    def split(iters, memory_ok):
        out = []
        for e, s, a in iters:
            if a == "m":
                out.append((e, s, "m"))
            elif s % m == 0:  # wholly in the block index j
                if not memory_ok:
                    raise axe.Error("a replica/partial iter %s crosses files" % ((e, s, a),))
                out.append((e, (s // m) * elements, "m"))
            elif m % s == 0 and (e * s) % m == 0:  # j outer, r inner
                out += [(e * s // m, elements, "m"), (m // s, s, "gpu")]
            elif e * s <= m and m % (e * s) == 0:  # wholly in the device r
                out.append((e, s, "gpu"))
            else:
                raise axe.Error("the saved iter %s does not split over %d ranks" % ((e, s, a), m))
        return out
    return axe.Layout.make(split(layout.shard, True), split(layout.replica, False),
                           split(layout.partial, False), {a: v for a, v in layout.offset.items() if a == "m"},
                           layout.reduce_op)


def load(d, placements):
    with open(os.path.join(d, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    shape = tuple(meta["shape"])
    saved = axe.Layout(meta["layout"])
    saved_mesh = axe.Mesh(meta["mesh"])
    n, m, r = saved_mesh.size, axe.world_size(), axe.rank()
    if n <= m:
        src_mesh = axe.Mesh(meta["mesh"], ranks=list(range(n)))
        local = np.load(os.path.join(d, "shard-%d.npy" % r)) if r < n else np.empty(0, np.float32)
        src = axe.from_local(local, src_mesh, saved, shape=shape)
    else:
        if saved_mesh.ndim != 1 or n % m:
            raise axe.Error("loading %d shards on %d ranks needs a 1-D saved mesh and %d dividing %d" % (n, m, m, n))
        parts = [np.load(os.path.join(d, "shard-%d.npy" % i)) for i in range(r, n, m)]
        layout = stacked_layout(saved, n, m, parts[0].size)
        src = axe.from_local(np.concatenate(parts), axe.Mesh(gpu=m), layout, shape=shape)
    t = src.redistribute(placements, axe.Mesh(gpu=m))
    want = axe.distribute(global_tensor(shape, np.float32), axe.Mesh(gpu=m), placements, src_rank=None)
    ok = bool(np.array_equal(t.local, want.local))
    bad = axe.from_local(np.array([0.0 if ok else 1.0]), axe.Mesh(gpu=m), axe.Partial("max"), shape=(1,)).full_tensor()[0]
    if r == 0:
        print("loaded %s saved on %d ranks (%s) onto %d ranks as %s via %s: %s" % (
            shape, n, meta["placements"], m, placements, src.layout, "ok" if bad == 0 else "MISMATCH"))
    return 0 if bad == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["save", "load"])
    ap.add_argument("dir")
    ap.add_argument("--shape", default="10,6")
    ap.add_argument("--placements", default=None, help="placements on gpu=<ranks> (save: S(0), load: S(1))")
    args = ap.parse_args()
    axe.init()
    try:
        if args.action == "save":
            save(args.dir, tuple(int(v) for v in args.shape.split(",")), args.placements or "S(0)")
            return 0
        return load(args.dir, args.placements or "S(1)")
    finally:
        axe.finalize()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (axe.Error, OSError) as e:
        print("[rank %s] reshard_checkpoint.py: %s" % (axe.rank() if axe.is_initialized() else "?", e), file=sys.stderr)
        sys.exit(2)
