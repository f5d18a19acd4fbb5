"""axe.cute against the C++ calculator (`axe cute OP ... --json`) on the shared reference vectors,
and value semantics."""
import json
import os
import pickle

import pytest

import axe
from axe import cute

OPS = {"coalesce", "filter", "complement", "composition", "logical_divide", "zipped_divide",
       "tiled_divide", "logical_product", "zipped_product", "tiled_product", "blocked_product",
       "raked_product", "right_inverse", "left_inverse", "slice"}


def vectors():
    d = os.environ.get("AXE_TESTDATA_DIR") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "testdata")
    path = os.environ.get("AXE_CUTE_VECTORS") or os.path.join(d, "cute_reference_vectors.json")
    if not os.path.exists(path):
        pytest.skip("no reference vectors at %s" % path)
    with open(path, encoding="utf-8") as f:
        return json.load(f)["cases"]


def tup(v):
    return tuple(tup(x) for x in v) if isinstance(v, list) else v


def tiler(b):
    kind = b.get("kind", "layout")
    if kind == "none":
        return None
    if kind == "int":
        return b["value"]
    if kind == "layout":
        return cute.Layout(tup(b["shape"]), tup(b["stride"]))
    return tuple(tiler(x) for x in b["elems"])


def python_result(case):
    op, inp = case["op"], case["input"]
    if op in ("coalesce", "filter", "right_inverse", "left_inverse"):
        return str(getattr(cute, op)(cute.Layout(inp["layout"]["str"])))
    if op == "complement":
        l = cute.Layout(inp["layout"]["str"])
        return str(cute.complement(l, tup(inp["cotarget"])) if "cotarget" in inp else cute.complement(l))
    if op == "slice":
        return str(cute.slice(tup(inp["coord"]), cute.Layout(inp["layout"]["str"])))
    return str(getattr(cute, op)(cute.Layout(inp["a"]["str"]), tiler(inp["b"])))


def cli_args(case):
    op, inp = case["op"], case["input"]
    if op in ("coalesce", "filter", "right_inverse", "left_inverse"):
        return [op, inp["layout"]["str"]]
    if op == "complement":
        c = inp.get("cotarget")
        return [op, inp["layout"]["str"]] + ([] if c is None else [json.dumps(c).replace("[", "(").replace("]", ")").replace(" ", "")])
    if op == "slice":
        return [op, inp["layout"]["str"], inp["coord_str"]]
    return [op, inp["a"]["str"], inp["b_str"]]


def test_reference_vectors_match_cli(cli):
    """Every 3rd vector of the ops the calculator has: Python and `axe cute` agree (same result
    text, or both reject)."""
    cases = [c for c in vectors() if c["op"] in OPS][::3]
    assert len(cases) > 300
    for case in cases:
        p = cli("cute", *cli_args(case), "--json", ok=False)
        want = json.loads(p.stdout)
        try:
            got = python_result(case)
        except axe.Error as e:
            assert "error" in want, (case["id"], str(e), want)
            continue
        assert want.get("result") == got, (case["id"], got, want)


def test_layout_values():
    l = cute.Layout("((2,3),4):((1,2),6)")
    assert l.shape == ((2, 3), 4) and l.stride == ((1, 2), 6)
    assert l.size == 24 and l.cosize == 24 and l.rank == 2 and l.depth == 2
    assert [l(i) for i in range(4)] == [0, 1, 2, 3] and l(((1, 1), 1)) == 9
    assert eval(repr(l), {"axe": axe}) == l and hash(l) == hash(cute.Layout(((2, 3), 4), ((1, 2), 6)))
    assert pickle.loads(pickle.dumps(l)) == l
    assert str(cute.Layout((4, 8))) == "(4,8):(1,4)"
    assert str(cute.composition(cute.Layout("(8,8):(8,1)"), cute.Layout("3:3"))) == "3:24"
    assert str(cute.slice((None, 1), cute.Layout("(2,4):(1,2)"))) == "(2):(1)"
    assert cute.slice_offset((None, 1), cute.Layout("(2,4):(1,2)")) == 2
    with pytest.raises(AttributeError):
        l.shape = 3
    with pytest.raises(axe.ParseError):
        cute.Layout("(2,3:(1,2)")


def test_swizzles(cli):
    s = cute.Swizzle(3, 4, 3)
    assert s == cute.Swizzle("Sw<3,4,3>") and eval(repr(s), {"axe": axe}) == s
    assert [s(x) for x in (0, 128, 144)] == [0, 144, 128]
    c = cute.ComposedLayout("Sw<3,4,3> o 0 o (8,64):(64,1)")
    assert c == cute.ComposedLayout(s, 0, cute.Layout("(8,64):(64,1)")) and hash(c) == hash(eval(repr(c), {"axe": axe}))
    values = [c(i) for i in range(c.size)]
    assert sorted(values) == list(range(512))
    out = cli("cute", "swizzle", "3", "4", "3", "(8,64):(64,1)", "--json").stdout
    assert json.loads(out)["values"][:64] == values[:64]
    with pytest.raises(axe.Error):
        cute.Swizzle(3, 4)
