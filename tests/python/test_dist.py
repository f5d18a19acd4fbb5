"""Distributed numpy tensors on the host backend, run by CTest under mpirun -np 1, 2 and 4: every
local shard and every gathered tensor element-wise against a numpy reference (DTensor's chunking
rule for placements, the layout's forward map for Axe layouts), for random placements and layouts
with uneven dims and partial sums; zero-copy views; bad inputs raise the same axe.Error on every
rank. Every rank runs the same tests with the same seed, so the collectives line up."""
import random

import numpy as np
import pytest

import axe
from conftest import seed

DTYPES = ["f64", "f32", "f16", "bf16", "i32", "i64", "u8"]


@pytest.fixture(scope="module", autouse=True)
def runtime():
    axe.init()
    yield


def meshes():
    n = axe.world_size()
    out = [axe.Mesh(gpu=n)]
    if n % 2 == 0:
        out.append(axe.Mesh(dp=2, tp=n // 2))
    if n > 1:
        out.append(axe.Mesh(gpu=n, ranks=list(reversed(range(n)))))
    return out


def values(shape, dtype, rng):
    """Small integers, exact in every dtype; bf16 as uint16 bits."""
    x = np.array([rng.randrange(0, 100) for _ in range(int(np.prod(shape)))], dtype=np.float32).reshape(shape)
    if dtype == "bf16":
        return (x.view(np.uint32) >> 16).astype(np.uint16)
    return x.astype(axe.DTYPES[dtype])


def chunk(n, p, i):
    """torch.chunk: ceil-sized chunks, a short or empty tail."""
    c = -(-n // p)
    b = min(i * c, n)
    return b, min(b + c, n)


def expected_local(x, mesh, placements):
    """DTensor's local shard of x on this rank: each Shard(d) chunks the current range of dim d,
    mesh axes in order (nested); a partial axis holds x on coordinate 0, zeros elsewhere."""
    if not mesh.contains(axe.rank()):
        return None
    coord = mesh.coord(axe.rank())
    ranges = [(0, n) for n in x.shape]
    zero = False
    for i, p in enumerate(placements):
        if p.is_shard():
            d = p.dim % x.ndim
            b, e = ranges[d]
            lb, le = chunk(e - b, mesh.shape[i], coord[i])
            ranges[d] = (b + lb, b + le)
        elif p.is_partial() and coord[i] != 0:
            zero = True
    local = x[tuple(slice(b, e) for b, e in ranges)]
    return np.zeros_like(local) if zero else local


def random_placements(rng, mesh, ndim, partial=True):
    out = []
    for _ in range(mesh.ndim):
        r = rng.random()
        if r < 0.55:
            out.append(axe.Shard(rng.randrange(ndim) - (ndim if rng.random() < 0.2 else 0)))
        elif r < 0.8 or not partial:
            out.append(axe.Replicate())
        else:
            out.append(axe.Partial())
    return out


def bits(a):
    """bf16 (ml_dtypes' bfloat16, where it is installed) as its uint16 bits, like the references."""
    a = np.asarray(a)
    return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


def same(a, b, what):
    a, b = bits(a), bits(b)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    assert np.array_equal(a, b), (what, a, b)


@pytest.mark.parametrize("trial", range(12))
def test_random_placements_elementwise(trial):
    rng = random.Random(seed() * 1000 + trial)
    mesh = rng.choice(meshes())
    shape = tuple(rng.randint(1, 9) for _ in range(rng.randint(1, 3)))
    dtype = DTYPES[trial % len(DTYPES)]
    x = values(shape, dtype, rng)
    src = random_placements(rng, mesh, len(shape))
    what = "trial %d seed %d: %s %s on %s %s" % (trial, seed(), shape, dtype, mesh, src)
    t = axe.distribute(x, mesh, src, dtype="bf16" if dtype == "bf16" else None, src_rank=rng.choice([None, 0]))
    assert t.shape == shape and t.dtype == dtype
    want = expected_local(x, mesh, src)
    if want is not None:
        same(t.local, want, what + " local")
    same(t.full_tensor(), x, what + " full")
    for step in range(3):
        dst = random_placements(rng, mesh, len(shape))
        r = t.redistribute(dst)
        w = what + " -> %s (step %d)" % (dst, step)
        same(r.full_tensor(), x, w + " full")
        if not any(p.is_partial() for p in dst):
            want = expected_local(x, mesh, dst)
            if want is not None:
                same(r.local, want, w + " local")
        t = r


def reference_slots(layout, mesh, shape, x):
    """{memory slot: value} of this rank's buffer under an Axe layout, from its forward map
    (term 0 holds the value, other partial terms the sum's identity 0)."""
    if not mesh.contains(axe.rank()):
        return {}
    mine = dict(zip(mesh.axes, mesh.coord(axe.rank())))
    flat = x.reshape(-1)
    slots = {}
    for i in range(flat.size):
        for p in layout.forward(i):
            if all(p.coord.get(a, 0) == v for a, v in mine.items()):
                slots[p.coord.get("m", 0)] = flat[i] if p.term == 0 else 0
    return slots


def axe_layouts(mesh, rows, cols):
    """Axe layouts DTensor cannot express, on (rows, cols) = (k * n, c): cyclic rows, rows
    interleaved over two axes, replicas and partial terms on named axes, column blocks in reverse."""
    n = mesh.size
    k = rows // n
    a = mesh.axes
    out = ["S[(%d,%d,%d):(%d,1@%s,1)]" % (rows // mesh.shape[0], mesh.shape[0], cols, cols, a[0])
           + ("" if mesh.ndim == 1 else " + R[%d:1@%s]" % (mesh.shape[1], a[1]))]
    if mesh.ndim == 2:
        out.append("S[(%d,%d,%d,%d):(%d,1@%s,1@%s,1)]" % (k, mesh.shape[1], mesh.shape[0], cols, cols, a[1], a[0]))
        out.append("S[(%d,%d):(%d,1)] + P[%d:1@%s] + R[%d:1@%s]" % (rows, cols, cols, mesh.shape[0], a[0], mesh.shape[1], a[1]))
    else:
        out.append("S[(%d,%d):(%d,1)] + P[%d:1@%s]" % (rows, cols, cols, n, a[0]))
    return out


@pytest.mark.parametrize("trial", range(4))
def test_axe_layouts_elementwise(trial):
    rng = random.Random(seed() * 7 + trial)
    mesh = meshes()[trial % len(meshes())]
    rows, cols = mesh.size * rng.randint(1, 3), rng.randint(1, 5)
    x = values((rows, cols), "f64", rng)
    layouts = axe_layouts(mesh, rows, cols)
    for text in layouts:
        l = axe.Layout(text)
        t = axe.distribute(x, mesh, l, src_rank=None)
        buf = t.local_buffer
        for slot, v in reference_slots(l, mesh, (rows, cols), x).items():
            assert buf[slot] == v, (text, str(mesh), slot, buf, v)
        same(t.full_tensor(), x, text)
        other = axe.Layout(rng.choice(layouts))
        r = t.redistribute(other)
        same(r.full_tensor(), x, "%s -> %s" % (text, other))
        if other.terms == 1:
            buf = r.local_buffer
            for slot, v in reference_slots(other, mesh, (rows, cols), x).items():
                assert buf[slot] == v, ("%s -> %s" % (text, other), slot, buf, v)
        back = r.redistribute("S(0)" if mesh.ndim == 1 else "S(0),S(1)")
        want = expected_local(x, mesh, axe.parse_placements("S(0)" if mesh.ndim == 1 else "S(0),S(1)"))
        if want is not None:
            same(back.local, want, "%s -> %s -> S(0)" % (text, other))


def address(a):
    return a.__array_interface__["data"][0]


def test_local_is_a_view_without_copy():
    mesh = axe.Mesh(gpu=axe.world_size())
    x = np.arange(4 * axe.world_size() * 3, dtype=np.float32).reshape(-1, 3)
    t = axe.distribute(x, mesh, "S(0)")
    a, b = t.local, t.local
    assert address(a) == address(b) == t._t.buffer_address()
    a[0, 0] = -1
    assert t.local[0, 0] == -1 and t.full_tensor()[4 * axe.rank(), 0] == -1
    d = np.from_dlpack(t.local_array("dlpack"))
    assert address(d) == address(a) and d.shape == a.shape
    # from_local over the caller's memory: the tensor's buffer IS the array.
    mine = np.full((4, 3), float(axe.rank()), dtype=np.float32)
    u = axe.from_local(mine, mesh, [axe.Shard(0)], shape=(4 * axe.world_size(), 3))
    assert address(u.local) == address(mine) == u._t.buffer_address()
    full = u.full_tensor()
    assert [full[4 * r, 0] for r in range(axe.world_size())] == list(range(axe.world_size()))
    # uneven: the local array is the held rows only (no padding visible); a short shard is copied in.
    n = 4 * axe.world_size() - 1
    v = axe.distribute(np.arange(n * 2, dtype=np.float64).reshape(n, 2), mesh, "S(0)")
    assert v.local.shape == ((3 if axe.rank() == axe.world_size() - 1 else 4), 2)
    w = axe.from_local(v.local.copy(), mesh, "S(0)", shape=(n, 2))
    same(w.full_tensor(), np.arange(n * 2, dtype=np.float64).reshape(n, 2), "uneven from_local")


def test_empty_cache_gives_back_once():
    """A second empty_cache() right after the first has nothing left to give back; the host
    backend keeps no cache at all."""
    mesh = meshes()[0]
    t = axe.distribute(np.arange(64.0).reshape(8, 8), mesh, "S(0)")
    r = t.redistribute("R")
    del r
    first = axe.empty_cache()
    assert first >= 0
    if axe.backend() == "host":
        assert first == 0
    assert axe.empty_cache() == 0
    same(t.full_tensor(), np.arange(64.0).reshape(8, 8), "a live tensor after empty_cache")


def test_visualize_and_repr(capsys):
    mesh = meshes()[-1] if axe.world_size() > 1 else meshes()[0]
    t = axe.distribute(np.zeros((4, 6)), mesh, [axe.Shard(0)] * mesh.ndim)
    text = axe.visualize(t, header="t")
    assert text.startswith("t\n") and "rows" in text or "rank" in text
    printed = capsys.readouterr().out
    assert (printed == text) == (axe.rank() == 0)
    assert "axe.DistTensor(shape=(4, 6), dtype=f64" in repr(t)
    assert t.placements == [axe.Shard(0)] * mesh.ndim


def test_bad_inputs_raise_on_every_rank():
    mesh = axe.Mesh(gpu=axe.world_size())
    x = np.zeros((4, 4))
    with pytest.raises(axe.Error, match="placement"):
        axe.distribute(x, mesh, "S(0),S(1)") if mesh.ndim == 1 else None
    with pytest.raises(axe.ParseError):
        axe.distribute(x, mesh, "S(0")
    with pytest.raises(axe.Error, match="unsupported dtype"):
        axe.distribute(np.zeros((4, 4), dtype=np.complex64), mesh, "S(0)")
    with pytest.raises(axe.Error, match="unsupported dtype"):
        axe.distribute(np.zeros((4, 4), dtype=np.uint16), mesh, "S(0)")
    with pytest.raises(axe.Error):
        axe.distribute(x, mesh, 3.5)
    with pytest.raises(axe.Error):
        axe.distribute(x, mesh, "R", src_rank=axe.world_size())
    t = axe.distribute(x, mesh, "R")
    with pytest.raises(axe.Error):
        t.redistribute("S(5)")
    with pytest.raises(axe.Error):
        t.redistribute(axe.Layout("S[(4,4):(4,1)] + R[9:1@gpu]"))
    with pytest.raises(axe.Error, match="holds a shard of shape"):
        axe.from_local(np.zeros((5, 5, 5)), mesh, "S(0)", shape=(4 * axe.world_size() + 1, 4))
    with pytest.raises(axe.Error, match="already initialized"):
        axe._axe._init("", 0.0)
    # the runtime still works after every error; DTensor's argument order works too
    same(t.redistribute("S(1)").full_tensor(), x, "after errors")
    same(t.redistribute(mesh, [axe.Shard(1)]).local, t.redistribute("S(1)").local, "DTensor order")
    same(t.redistribute(placements="S(1)", device_mesh=mesh).local, t.redistribute("S(1)").local, "keywords")


def test_dtensor_names():
    n = axe.world_size()
    mesh = axe.init_device_mesh("cpu", (n,), mesh_dim_names=("gpu",))
    assert mesh == axe.Mesh(gpu=n) and axe.init_device_mesh("cpu", n).axes == ["dim0"]
    x = np.arange(2.0 * n * 3).reshape(2 * n, 3)
    t = axe.distribute_tensor(x, mesh, [axe.Shard(0)])
    u = axe.DistTensor.from_local(t.to_local(), mesh, [axe.Shard(0)], shape=x.shape)
    same(u.full_tensor(), x, "from_local of to_local")
    assert t.device_mesh == mesh and "rank" in axe.visualize_sharding(t, use_rank=None) or "rows" in axe.visualize(t)


def test_dtypes_round_trip():
    mesh = axe.Mesh(gpu=axe.world_size())
    rng = random.Random(seed())
    for dt in DTYPES:
        x = values((5, 3), dt, rng)
        t = axe.distribute(x, mesh, "S(0)", dtype="bf16" if dt == "bf16" else None)
        assert t.dtype == dt
        y = t.redistribute("P").redistribute("R").full_tensor()
        same(y, x, dt)
        # bf16 comes back as ml_dtypes' bfloat16 where it is installed, else as uint16 bits.
        assert y.dtype == ((axe.DTYPES["bf16"] or np.uint16) if dt == "bf16" else x.dtype)
