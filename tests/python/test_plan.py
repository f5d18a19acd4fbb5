"""axe.plan / axe.simulate against `axe plan` / `axe simulate`: the same text, JSON and numbers."""
import json

import pytest

import axe

CASES = [
    ("64,128", "dp=2,tp=2", "S(0),S(1)", "S(1),S(0)", []),
    ("64,128", "gpu=4", "S(0)", "S(1)", []),
    ("64,128", "gpu=4", "S(0)", "R", ["--staging-limit", "32K"]),
    ("64,128", "x=2,y=2", "R,P", "S(0),S(1)", ["--passes", "cuda"]),
    ("5,4095", "gpu=2", "S(0)", "S(1)", ["--passes", "cuda"]),
    ("7,6", "gpu=3", "S[(3,3,6):(1@gpu,6,1)]", "R", ["--dtype", "bf16"]),
]


def kwargs(opts):
    k = {}
    for name, value in zip(opts[::2], opts[1::2]):
        if name == "--staging-limit":
            k["staging_limit"] = int(value.rstrip("K")) * 1024
        elif name == "--passes":
            k["passes"] = value
        elif name == "--dtype":
            k["dtype"] = value
    return k


@pytest.mark.parametrize("shape,mesh,src,dst,opts", CASES)
def test_plan_prints_as_cli(cli, shape, mesh, src, dst, opts):
    args = ["--shape", shape, "--mesh", mesh, "--from", src, "--to", dst] + opts
    shp = tuple(int(x) for x in shape.split(","))
    p = axe.plan(shp, axe.Mesh(mesh), src, dst, **kwargs(opts))
    assert str(p) + "\n" == cli("plan", *args).stdout
    assert json.loads(p.json()) == json.loads(cli("plan", *args, "--json").stdout)
    r1 = p.rank(1)
    assert str(r1) + "\n" == cli("plan", *args, "--rank", "1").stdout
    assert r1.rank == 1 and len(r1.steps) == len(p.steps)
    assert p.bytes_received == p.totals["bytes_received"] >= p.lower_bound_bytes > 0 or dst == "S(0)"
    s = axe.simulate(shp, axe.Mesh(mesh), src, dst, **kwargs(opts))
    assert s.ok and bool(s) and str(s) + "\n" == cli("simulate", *args).stdout
    assert sorted(s.destination) == list(range(axe.Mesh(mesh).size))


def test_plan_objects():
    mesh = axe.Mesh(dp=2, tp=2)
    p = axe.plan((64, 128), mesh, [axe.Shard(0), axe.Shard(1)], "S(1),S(0)")
    assert p.steps == [{"kind": "permute", "axes": [], "equal_blocks": True}]
    assert p.bytes_sent == 16384 and p.max_bytes_received == 8192 and p.lower_bound_bytes == 16384
    st = p.rank(1).steps[0]
    assert st.kind == "permute" and st.sends == [(2, 2048)] and st.recvs == [(2, 2048)]
    g = axe.plan((64, 128), axe.Mesh(gpu=4), "S(0)", "R")
    assert g.steps[0]["kind"] == "all-gather" and g.rank(0).steps[0].group == [0, 1, 2, 3]
    assert g.rank(0).steps[0].staging_bytes == 40960
    d = axe.plan((64, 128), axe.Mesh(gpu=4), axe.Layout("S[(4,16,128):(1@gpu,128,1)]"), axe.Replicate())
    assert d.steps[0]["kind"] == "all-gather"
    x = axe.plan((8, 8), axe.Mesh(gpu=2), "S(0)", "S(0)", to_mesh=axe.Mesh("gpu=2:2,3"))
    assert x.ranks == [0, 1, 2, 3]


def test_simulate_destination_values():
    s = axe.simulate((6, 4), axe.Mesh(gpu=2), "S(1)", "R")
    for buf in s.destination.values():
        assert list(buf) == list(range(24))
    assert s.transport_bytes > 0


def test_mesh_and_placements():
    m = axe.Mesh(dp=2, tp=2)
    assert m == axe.Mesh("dp=2,tp=2") == axe.Mesh([("dp", 2), ("tp", 2)]) and hash(m) == hash(axe.Mesh("dp=2,tp=2"))
    assert m.axes == ["dp", "tp"] and m.shape == (2, 2) and m.size == 4 and m.coord(1) == [0, 1]
    assert eval(repr(m), {"axe": axe}) == m
    r = axe.Mesh(gpu=4, ranks=[3, 2, 1, 0])
    assert r.rank_at([0]) == 3 and eval(repr(r), {"axe": axe}) == r
    assert axe.Shard(0) == axe.Shard(0) and axe.Shard(0) != axe.Shard(1)
    assert [str(p) for p in axe.parse_placements("S(0),R,P(max)")] == ["S(0)", "R", "P(max)"]
    assert repr(axe.Partial("max")) == "axe.Partial('max')" and repr(axe.Shard(1)) == "axe.Shard(1)"
    assert eval(repr(axe.Shard(0, axes=("dp", "tp"))), {"axe": axe}) == axe.Shard(0, axes=("dp", "tp"))
    l = axe.shard((7, 6), m, "S(0),S(1)")
    assert l.padded_shape == [8, 6] and l.local_shard(3)["shape"] == [3, 3]
    assert l.placements == [axe.Shard(0), axe.Shard(1)]


def test_bad_requests():
    m = axe.Mesh(gpu=4)
    with pytest.raises(axe.Error, match="mesh"):
        axe.plan((8, 8), m, "S(0),S(1)", "R")
    with pytest.raises(axe.ParseError):
        axe.plan((8, 8), m, "S(0", "R")
    with pytest.raises(axe.Error):
        axe.plan((8, 8), m, "S(2)", "R")
    with pytest.raises(axe.Error, match="partial"):
        axe.plan((8, 8), m, "P", "P(max)")
    with pytest.raises(axe.Error):
        axe.plan((8, 8), m, 42, "R")
    with pytest.raises(axe.Error, match="chunks"):
        axe.plan((8, 8), m, "S(0)", "R", chunks=[1, 2, 3])
    with pytest.raises(axe.Error):
        axe.plan((8, 8), m, "S(0)", "R", dtype="complex64")
    with pytest.raises(axe.Error):
        axe.Mesh(gpu=0)
    with pytest.raises(axe.Error):
        axe.Mesh("dp=2", tp=2)
    with pytest.raises(axe.Error):
        axe.Partial("median")
