"""axe.Layout and the layout algebra against the C++ calculator (`axe` CLI) and their laws."""
import copy
import pickle
import re

import pytest

import axe

TILE = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp"


def test_readme_tile_forward_and_backward():
    l = axe.Layout(TILE)
    got = l.forward((2, 9), shape=(8, 16))
    assert [(p.coord, p.replica, p.term) for p in got] == [
        ({"lane": 8, "warp": 6, "m": 1}, 0, 0), ({"lane": 8, "warp": 10, "m": 1}, 1, 0)]
    assert l.forward(41) == got
    assert l.backward({"lane": 8, "warp": 10, "m": 1}) == (41, 1, 0)
    assert l.backward("lane=8,warp=10,m=1", shape=(8, 16)) == ((2, 9), 1, 0)
    assert l.backward({"lane": 8, "warp": 7, "m": 1}) is None
    assert l.span() == {"lane": 32, "warp": 6, "m": 2}
    assert l.size == 128 and l.replicas == 2 and l.terms == 1
    assert l.axes == ["lane", "warp", "m"]
    assert l.offset == {"warp": 5}
    assert l.shard[0] == (8, 4, "lane") and l.replica == [(2, 4, "warp")]


def test_value_semantics():
    l = axe.Layout(TILE)
    assert eval(repr(l), {"axe": axe}) == l
    assert str(l) == TILE
    assert hash(axe.Layout(TILE)) == hash(l)
    assert {l: 1}[axe.Layout(TILE)] == 1
    assert l != axe.Layout("S[4:1]") and l != TILE
    with pytest.raises(AttributeError):
        l.size = 3
    with pytest.raises(AttributeError):
        l.anything = 3
    assert pickle.loads(pickle.dumps(l)) == l
    assert copy.deepcopy(l) == l
    m = axe.Layout.make([(8, 4, "lane"), (2, 1, "warp"), (4, 1, "lane"), (2, 1)], [(2, 4, "warp")], offset={"warp": 5})
    assert m == l


@pytest.mark.parametrize("text", [
    "S[(8,4,4,8,8,8):(4@lane,1@lane,16,2,8,8)]",
    "S[(8,8,8,4,2):(512,64,8,2,1)]",
    "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]",
    "S[(64,128):(128,1)] + P[4:1@gpu]",
    "S[(4,1,6):(6,9,1)] + R[(2,1):(-3@x,4)] + P<max>[3:1@y] + 0@x + 2",
])
def test_canonicalize_matches_cli(cli, text):
    l = axe.Layout(text)
    want = cli("canon", text).stdout.strip()
    assert str(axe.canonicalize(l)) == want == str(l.canonicalize())
    assert axe.equivalent(l, axe.canonicalize(l))
    assert axe.canonicalize(axe.canonicalize(l)) == axe.canonicalize(l)


def test_span_storage_slice_match_cli(cli):
    assert str(axe.storage(axe.Layout("S[(2,32,2,64):(1@gpu,64,2@gpu,1)]"))) == cli(
        "storage", "S[(2,32,2,64):(1@gpu,64,2@gpu,1)]").stdout.strip() == "S[(32,64):(64,1)]"
    s = axe.slice(axe.Layout("S[(2,8,3,8):(192,8,64,1)]"), (16, 24), [(0, 8), slice(8, 24)])
    assert str(s) == cli("slice", "S[(2,8,3,8):(192,8,64,1)]", "--shape", "16,24", "--region",
                         "0:8,8:24").stdout.strip()
    assert axe.slice(axe.Layout("S[6:1]"), (6,), [(1, 5)]) is not None


def random_layout(rng):
    """A random Axe layout text over m, x and y (D with 1-4 iters, maybe R, P and offsets)."""
    def iters(n, axes):
        ex = [rng.choice([1, 2, 3, 4]) for _ in range(n)]
        st = [rng.choice([0, 1, 2, 3, 4, 6, 8, -1]) for _ in range(n)]
        ax = [rng.choice(axes) for _ in range(n)]
        txt = ["%d%s" % (s, "" if a == "m" else "@" + a) for s, a in zip(st, ax)]
        if n == 1:
            return "%d:%s" % (ex[0], txt[0])
        return "(%s):(%s)" % (",".join(map(str, ex)), ",".join(txt))
    parts = ["S[%s]" % iters(rng.randint(1, 4), ["m", "m", "x", "y"])]
    if rng.random() < 0.4:
        parts.append("R[%s]" % iters(rng.randint(1, 2), ["x", "y"]))
    if rng.random() < 0.3:
        parts.append("P%s[%s]" % (rng.choice(["", "<max>"]), iters(1, ["y"])))
    if rng.random() < 0.3:
        parts.append("%d@x" % rng.randint(0, 3))
    return " + ".join(parts)


def test_random_layouts_against_cli(cli, rng):
    """Canonical form, span and eval of random layouts equal the calculator's, element by element."""
    for _ in range(25):
        text = random_layout(rng)
        l = axe.Layout(text)
        assert axe.Layout(str(l)) == l, text
        assert str(axe.canonicalize(l)) == cli("canon", text).stdout.strip(), text
        span = cli("span", text).stdout.strip()
        assert span == "{" + ", ".join("%s %d" % kv for kv in l.span().items()) + "}", text
        x = rng.randrange(l.size)
        out = cli("eval", text, "--shape", str(l.size), "--at", str(x)).stdout.strip().splitlines()
        got = l.forward(x)
        assert len(out) == len(got), text
        for line, p in zip(out, got):
            assert line.startswith("{" + ", ".join("%s %d" % kv for kv in p.coord.items()) + "}"), (text, line)


def test_backward_inverts_forward_brute_force(rng):
    for _ in range(40):
        l = axe.Layout(random_layout(rng))
        try:
            l.backward({})
        except axe.Error:
            continue  # not invertible: backward says so
        for x in range(l.size):
            for p in l.forward(x):
                assert l.backward(p.coord) == (x, p.replica, p.term), (str(l), x)


def test_group_tile_tile_of_direct_sum_project():
    g = axe.group(axe.Layout("S[(4,6):(6,1)]"), (2, 12))
    assert str(g[0]) == "S[(2,2,6):(12,6,1)]" and list(g[1]) == [0, 1, 3]
    assert axe.group(axe.Layout("S[(2,3):(1,2)]"), (3, 2)) is None  # 2 does not split along (3, 2)
    with pytest.raises(axe.Error):
        axe.group(axe.Layout("S[6:1]"), (4,))
    t = axe.tile(axe.Layout("S[(8,8):(8,1)]"), (8, 8), axe.Layout("S[(2,4):(1,2)]"), (2, 4))
    assert str(axe.canonicalize(t)) == "S[(8,2,32):(64,1,2)]"
    o = axe.tile_of(axe.Layout("S[(8,2,8,3):(48,3,6,1)]"), (16, 24), axe.Layout("S[(2,3):(3,1)]"), (2, 3))
    assert axe.equivalent(o, axe.Layout("S[(8,8):(8,1)]"))
    d = axe.direct_sum(axe.Layout("S[(2,2):(8,2)]"), (2, 2), axe.Layout("S[(2,2):(4,1)]"), (2, 2))
    assert str(d) == "S[(2,2,2,2):(8,4,2,1)]"
    assert str(axe.project(axe.Layout("S[(2,32,128):(1@gpu,128,1)]"), ["gpu"])) == "S[(2,32,128):(1@gpu,0,0)]"


def test_validity_and_cute_conversion():
    assert axe.is_valid(axe.Layout("S[(2,8):(1@gpu,1)]"), {"gpu": 2})
    assert "gpu" in axe.check_valid(axe.Layout("S[(4,8):(1@gpu,1)]"), axe.Mesh(gpu=2))
    assert not axe.is_valid(axe.Layout("S[(2,2):(1,1)]"))
    c = axe.Layout("S[(4,8):(8,1)]").to_cute("coordinate")
    assert isinstance(c, axe.cute.Layout)
    assert axe.Layout.from_cute(c, "coordinate") is not None


def test_errors():
    with pytest.raises(axe.ParseError) as e:
        axe.Layout("S[(8,2:1]")
    assert e.value.position == 6 and isinstance(e.value, axe.Error) and isinstance(e.value, ValueError)
    assert "expected ',' or ')'" in str(e.value)
    with pytest.raises(axe.Error, match="extent"):
        axe.Layout("S[0:1]")
    with pytest.raises(axe.Error):
        axe.Layout(TILE).forward(128)
    with pytest.raises(axe.Error):
        axe.Layout(TILE).forward((2, 9))  # a coordinate needs shape=
    with pytest.raises(TypeError):
        axe.Layout(3)
    with pytest.raises(axe.Error):
        axe.slice(axe.Layout("S[8:1]"), (8,), [(4, 2)])
    with pytest.raises(axe.Error, match="not an integer"):
        axe.Layout(TILE).backward("lane=x")
    with pytest.raises(axe.Error):
        axe.Layout.make([(2, 1, "")])
    assert issubclass(axe.Error, RuntimeError)
    assert re.match(r"axe\.Layout\('S\[4:1\]'\)", repr(axe.Layout("S[4:1]")))
