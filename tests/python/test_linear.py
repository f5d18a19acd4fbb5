"""axe.linear: F2 linear layouts, thread layouts, the bank model, swizzles and conversion plans.

Three tiers (STYLE.md §4): exact examples with hand-derived numbers (the TV-n test vectors of
LINEAR_LAYOUTS.md), seeded random property tests (AXE_TEST_SEED replays), and agreement with the
C++ calculator (`axe linear / thread-layout / banks / swizzle / convert-layout`) on the same input.
"""
import copy
import json
import pickle
import random

import pytest

import axe
from axe import linear as ll
from axe.linear import LinearLayout as LL
from conftest import seed


def identity_on(dims):
    """The identity on [(name, size)] dims (the product of identity_1d, first dim minor)."""
    out = LL()
    for name, size in dims:
        out = out * ll.identity_1d(size, name, name)
    return out


def table(l):
    """Every input (packed, first dim lowest) -> packed output, by apply on named coordinates."""
    dims = l.in_dims
    rows = []
    total = 1
    for _, s in dims:
        total *= s
    for x in range(total):
        coords, rest = {}, x
        for name, s in dims:
            coords[name] = rest % s
            rest //= s
        out = l.apply(coords)
        packed, shift = 0, 0
        for name, s in l.out_dims:
            packed |= out[name] << shift
            shift += s.bit_length() - 1
        rows.append(packed)
    return rows


# ---- exact examples (LINEAR_LAYOUTS.md test vectors) ---------------------------------------------


def test_tv1_swizzle_table():
    # t: [(1,1),(2,2)], w: [(0,1),(0,2)] on (x, y): L(t, w) = (t, w ^ t).
    l = LL({"t": [(1, 1), (2, 2)], "w": [(0, 1), (0, 2)]}, ["x", "y"])
    assert l.out_dims == [("x", 4), ("y", 4)] and l.in_dims == [("t", 4), ("w", 4)]
    for t in range(4):
        for w in range(4):
            assert l(t=t, w=w) == {"x": t, "y": w ^ t}
    assert l.is_invertible and l.rank == 4


def test_tv2_matrix_vector():
    l = LL({"in": [1, 2, 14, 12]}, [("out", 16)], require_surjective=False)
    assert l.apply(**{"in": 6}) == {"out": 2 ^ 14}
    assert l.apply_flat(6) == 12
    assert not l.is_surjective and l.rank == 3
    with pytest.raises(axe.Error, match="surjective|image"):
        LL({"in": [1, 2, 14, 12]}, [("out", 16)])


def test_tv3_compose():
    l1 = LL("{in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1:4, out2:4]")
    l2 = LL("{out1: [(2,2),(1,0)], out2: [(1,1),(2,1)]} -> [out3:4, out4:4]")
    c = ll.compose(l1, l2)
    assert c == l1.compose(l2)
    assert str(c) == "{in1: [(3,3),(1,1)], in2: [(2,2),(0,3)]} -> [out3:4, out4:4]"
    assert not c.is_surjective


def test_tv4_product():
    a = ll.identity_1d(4, "in", "o1") * ll.identity_1d(8, "in", "o2")
    assert a == LL({"in": [(1, 0), (2, 0), (0, 1), (0, 2), (0, 4)]}, [("o1", 4), ("o2", 8)])
    assert ll.product(ll.identity_1d(16, "in", "out"), ll.identity_1d(32, "in", "out")) == \
        ll.identity_1d(512, "in", "out")
    z = ll.identity_1d(8, "in", "out") * ll.zeros_1d(16, "in", "out")
    assert z.bases == {"in": [(1,), (2,), (4,), (0,), (0,), (0,), (0,)]}
    assert LL() * z == z == z * LL()


def test_tv5_invert_and_compose():
    l1 = LL("{in1: [2,1,4]} -> [out:8]")
    l2 = LL("{in2: [4,1,2]} -> [out:8]")
    c = ll.invert_and_compose(l1, l2)
    assert c == LL("{in1: [4,2,1]} -> [in2:8]")
    assert c.compose(l2) == l1
    n = LL("{in2: [0,2,1,4]} -> [out:8]")
    c = l1.invert_and_compose(n)
    assert c == LL({"in1": [2, 4, 8]}, [("in2", 16)], require_surjective=False)
    assert c.compose(n) == l1 and not c.is_surjective


def test_tv6_reshape_and_flatten():
    l = LL("{in1: [1,4,8], in2: [2]} -> [out:16]")
    r = l.reshape_ins([("in3", 2), ("in4", 8)])
    assert r.bases == {"in3": [(1,)], "in4": [(4,), (8,), (2,)]}
    assert r.reshape_ins(l.in_dims) == l
    l = LL("{in1: [1,4,8], in2: [3]} -> [out:16]")
    r = ll.reshape_outs(l, {"out2": 2, "out3": 8})
    assert r.bases == {"in1": [(1, 0), (0, 2), (0, 4)], "in2": [(1, 1)]}
    l = LL({"in1": [(1, 0), (4, 1), (8, 4)], "in2": [(3, 2)]}, [("o1", 16), ("o2", 8)],
           require_surjective=False)
    f = l.flatten_outs()
    assert f.bases == {"in1": [(1,), (4 + 16,), (8 + 4 * 16,)], "in2": [(3 + 2 * 16,)]}
    assert f.out_dims == [("o1", 128)]
    assert l.flatten_ins().in_dims == [("in1", 16)]


def test_tv7_free_variables():
    l = ll.identity_1d(2, "in", "out") * ll.zeros_1d(4, "in", "out") * \
        ll.identity_1d(4, "in", "out") * ll.zeros_1d(2, "in", "out")
    assert l.free_variable_masks() == {"in": 0b100110}
    l = LL("{in1: [(1,1),(2,2),(0,0)], in2: [(1,0),(0,1),(2,0)]} -> [out1:4, out2:4]")
    assert ll.free_variable_masks(l) == {"in1": 0b100, "in2": 0b10}
    assert l.broadcast_masks() == {"in1": 0b100, "in2": 0}
    # The nuance: a canonical complement, not "flips that leave the output unchanged".
    assert LL("{in: [1,1]} -> [out:2]").free_variable_masks() == {"in": 0b10}


def test_tv8_divide_left():
    l1 = LL("{in1: [(1,1),(2,2),(0,8),(0,4)], in2: [(0,2),(0,1)]} -> [out1:4, out2:16]")
    l2 = LL("{in1: [(1,1),(2,2)], in2: [(0,2),(0,1)]} -> [out1:4, out2:4]")
    l3 = LL("{in1: [(0,2),(0,1)], in2: []} -> [out1:1, out2:4]")
    assert l2 * l3 == l1
    assert ll.divide_left(l1, l2) == l3 == l1.divide_left(l2)
    assert ll.divide_left(ll.identity_1d(8, "in", "out"), ll.identity_1d(4, "in", "out")) == \
        ll.identity_1d(2, "in", "out")
    # Not of block form: None (a result that does not exist is not an error).
    assert ll.divide_left(LL("{in: [2,1]} -> [out:4]"), ll.identity_1d(2, "in", "out")) is None


def test_tv9_sublayout():
    l = LL("{in1: [(1,0),(0,1),(2,0)], in2: [(0,1)]} -> [out1:4, out2:2]")
    assert l.sublayout(["in1", "in2"], ["out1"]) == LL("{in1: [1,0,2], in2: [0]} -> [out1:4]")
    s = ll.sublayout(l, [], "out1")
    assert s.out_dims == [("out1", 4)] and s.in_dims == []
    assert l.sublayout_is_zero("in2", "out1") and not l.sublayout_is_zero("in2", "out2")


@pytest.mark.parametrize("text,width", [
    ("{in: [1,2]} -> [out:4]", 4),
    ("{in: [1,2,4,9]} -> [out:16]", 1),
    ("{in: [1,2,4,10]} -> [out:16]", 2),
    ("{in: [1,4,2]} -> [out:8]", 2),
    ("{in: [1,2,4], in2: [8,18]} -> [out:32]", 2),
])
def test_tv10_vector_width(text, width):
    assert ll.num_consecutive_in_out(LL(text)) == width == LL(text).num_consecutive_in_out()


def test_tv10_zeros_then_identity():
    l = ll.zeros_1d(4, "in", "o1") * ll.identity_1d(4, "in", "o2")
    assert l.num_consecutive_in_out() == 1


def test_tv11_apply():
    l = LL("{in1: [(4,2),(2,1),(1,0)], in2: [(1,2),(2,1)]} -> [out1:8, out2:4]")
    assert l.apply(in1=1, in2=0) == {"out1": 4, "out2": 2}
    assert l({"in1": 0}, in2=1) == {"out1": 1, "out2": 2}
    assert l.basis("in2", 1) == (2, 1)
    assert l.columns[0] == 4 | 2 << 3  # the first output dim in the low bits


def test_tv12_cute_bridge():
    l = LL.from_cute(axe.cute.Layout("(2,2,2):(2,4,1)"))
    assert l == LL("{in: [2,4,1]} -> [out:8]")
    assert [l.apply_flat(i) for i in range(8)] == [0, 2, 4, 6, 1, 3, 5, 7]
    # right_inverse((4,8):(8,1)) is the pseudo-inverse of [8,16,1,2,4].
    r = ll.from_cute("(4,8):(8,1)").pseudo_invert()
    assert r == LL("{out: [4,8,16,1,2]} -> [in:32]")
    assert ll.from_cute(axe.cute.right_inverse(axe.cute.Layout("(4,8):(8,1)")), "out", "in") == r
    with pytest.raises(axe.Error):
        ll.from_cute("(2,2):(1,1)")  # overlapping fields carry


def test_tv13_swizzle_bits():
    s = ll.from_swizzle(axe.cute.Swizzle(2, 3, 3), 8)
    assert s.bases == {"offset": [(v,) for v in [1, 2, 4, 8, 16, 32, 72, 144]]}
    assert s.apply_flat(255) == 231
    assert s.compose(s) == ll.identity_1d(256, "offset", "offset")  # an involution
    t = LL.from_swizzle("Sw<3,4,3>", 10)
    assert t.bases["offset"][7:] == [(144,), (288,), (576,)] and t.apply_flat(1023) == 911


def test_tv14_composed_layout_is_triton_swizzled_shared():
    # Triton vec=8, perPhase=1, maxPhase=8 on 8x64: offset -> (row, col) bases; CuTe's 1-D index
    # of (row, col) in (8,64) is row + 8 col.
    triton = [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (0, 32), (1, 8), (2, 16), (4, 32)]
    inv = ll.invert(ll.from_cute(axe.cute.ComposedLayout("Sw<3,3,3> o 0 o (8,64):(64,1)")))
    assert inv.bases == {"out": [(r + 8 * c,) for r, c in triton]}


# The 16x32 f32 transpose of TV-15: store lane = column, register = row; load lane%16 = row,
# column = 2 register + lane/16.
STORE = "S[(16,32):(1,1@lane)]"
LOAD = "S[(16,16,2):(1@lane,1,16@lane)]"


def test_tv15_banks():
    rm = "S[(16,32):(32,1)]"
    st = ll.banks(rm, STORE, (16, 32), "f32")
    assert (st.warps, st.instructions, st.vector_bytes) == (1, 16, 4)
    assert st.per_instruction == [1] * 16 and st.wavefronts == 16
    ld = ll.banks(rm, LOAD, (16, 32), dtype=4)
    assert ld.per_instruction == [16] * 16 and ld.wavefronts == 256 and ld.ideal == 16
    assert ld.f2_wavefronts == 16
    sw = ll.banks(rm, LOAD, (16, 32), "f32", swizzle=(4, 1, 4))
    assert sw.per_instruction == [1] * 16 and sw.f2_wavefronts == 1
    assert ll.f2_wavefronts(rm, LOAD, (16, 32)) == 16
    assert ll.f2_wavefronts(axe.Layout(rm), LOAD, (16, 32), swizzle="Sw<4,1,4>") == 1
    assert ll.f2_wavefronts("S[(16,32):(33,1)]", LOAD, (16, 32)) is None  # padded rows: not F2
    # Offsets given explicitly: 32 m + (n ^ 2m), the same placement as Sw<4,1,4>.
    offsets = [32 * m + (n ^ (2 * m)) for m in range(16) for n in range(32)]
    assert ll.banks(offsets, LOAD, (16, 32)).per_instruction == sw.per_instruction
    assert len(sw.offsets) == 16 * 32


def test_tv15_optimal_swizzle():
    p = ll.optimal_swizzle(STORE, LOAD, (16, 32), "f32")
    assert p.origin == "generic"
    assert p.offset_bases == [(1, 0), (2, 0), (0, 1), (4, 0), (8, 0), (0, 8), (0, 16), (4, 2),
                              (8, 4)]
    assert (p.cost.store.instructions, p.cost.store.vector_bytes, p.cost.store.wavefronts) == \
        (4, 16, 16)
    assert (p.cost.load.instructions, p.cost.load.vector_bytes, p.cost.load.wavefronts) == \
        (16, 4, 16)
    assert p.cost.wavefronts == 32 and p.cost.instructions == 20
    assert p.row_major.wavefronts == 272 and p.row_major.instructions == 32
    assert p.best_swizzle == axe.cute.Swizzle(4, 1, 4)
    assert p.best_swizzle_cost.wavefronts == 32 and p.best_swizzle_cost.instructions == 32
    assert p.cost.better_than(p.best_swizzle_cost) and p.cost.better_than(p.row_major)
    assert str(p.swizzle) == "Sw<2,3,4>" and str(p.axe_layout) == "S[(4,4,4,4,2):(8,1,32,128,4)]"
    assert p.shared.is_invertible
    # The law of as_swizzled_axe: offset(x) == sw(axe(x)) for every element.
    offsets = ll.shared_offsets(p.shared)
    for x in range(16 * 32):
        assert p.swizzle(p.axe_layout.forward_first(x)["m"]) == offsets[x]
    assert ll.as_swizzled_axe(p.shared) == (p.swizzle, p.axe_layout)
    # access_cost (the F2 formula) agrees with the plan's costs.
    assert ll.access_cost(p.shared, STORE) == p.cost.store
    assert ll.access_cost(p.shared, LL.from_axe(axe.Layout(LOAD), (16, 32))) == p.cost.load


def linear_spec(reg, lane):
    return "linear:" + json.dumps({"reg": [[b] for b in reg], "lane": [[b] for b in lane]})


@pytest.mark.parametrize("src,dst,n,selects,shuffles,step", [
    # TV-17: 4 selects, 2 shuffles (a 3-cycle: swap, shfl.idx, swap).
    (([1], [2, 4]), ([4], [1, 2]), 8, 4, 2, "shfl.sync.idx"),
    # TV-18: one transposition: ship, 6 selects and 2 shfl.bfly.
    (([1, 2], [4, 8]), ([4, 2], [1, 8]), 16, 6, 2, "ship"),
    # TV-19: the 4x4 transpose across 4 lanes: 16 selects, 3 shuffles.
    (([1, 2], [4, 8]), ([4, 8], [1, 2]), 16, 16, 3, "shfl.sync.idx"),
])
def test_tv17_19_shuffles(src, dst, n, selects, shuffles, step):
    p = ll.convert_plan(linear_spec(*src), linear_spec(*dst), n, choose="shuffles", simulate=True)
    assert p.mechanism == "shuffles" and p.simulated and p.simulate() == ""
    assert (p.selects, p.shuffles, p.barriers, p.shared_bytes) == (selects, shuffles, 0, 0)
    assert any(step in s for s in p.steps)
    # issue cost without shared memory: selects + 2 shuffles.
    assert p.issue_cost == selects + 2 * shuffles


def test_tv19_one_warp_prefers_shared():
    p = ll.convert_plan("S[(4,4):(1@lane,1)]", "S[(4,4):(1,1@lane)]", (4, 4), "f32")
    assert p.mechanism == "shared" and p.issue_cost == 19 < 22 and p.simulate() == ""
    assert p.barriers == 1 and p.shared_bytes == 16 * 4
    layout, sw = p.shared_layout
    assert isinstance(layout, axe.Layout)


def test_convert_none_and_registers():
    p = ll.convert_plan("S[(4,4):(1@lane,1)]", axe.Layout("S[(4,4):(1@lane,1)]"), (4, 4))
    assert p.mechanism == "none" and p.steps == [] and p.issue_cost == 0
    # Two registers swapped: a rename, no instruction.
    p = ll.convert_plan("S[(4,2,2):(1@lane,2,1)]", "S[(4,2,2):(1@lane,1,2)]", (16,))
    assert p.mechanism == "registers" and p.selects == 0 and p.shuffles == 0
    assert p.simulate() == "" and ll.simulate(p) == ""


def test_convert_with_shared_layouts():
    rm = ll.row_major_linear((16, 32))
    assert ll.shared_offsets(rm) == list(range(16 * 32))
    p = ll.convert_plan(STORE, LOAD, (16, 32), shared=rm, choose="shared", simulate=True)
    assert p.shared_layout == rm
    assert (p.store_wavefronts, p.load_wavefronts) == (16, 256)
    q = ll.convert_plan(STORE, LOAD, (16, 32), swizzle=axe.cute.Swizzle(4, 1, 4), choose="shared",
                        simulate=True)
    assert (q.store_wavefronts, q.load_wavefronts) == (16, 16)
    assert q.shared_layout == (axe.Layout("S[(16,32):(32,1)]"), axe.cute.Swizzle(4, 1, 4))
    assert ll.swizzled_linear("Sw<4,1,4>", (16, 32)).is_invertible


# ---- the Axe bridge and thread layouts ----------------------------------------------------------

TILE = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp"


def test_bridge_header_example():
    l = LL.from_axe(axe.Layout(TILE), (8, 16))
    # bridge.hpp: m [(1,0)], lane [(2,0),(4,0),(0,1),(0,2),(0,4)], warp [(8,0),(0,0),(0,0)] in
    # (column, row) order.
    assert l.bases == {"m": [(1, 0)], "lane": [(2, 0), (4, 0), (0, 1), (0, 2), (0, 4)],
                       "warp": [(8, 0), (0, 0), (0, 0)]}
    assert l.out_dims == [("dim1", 16), ("dim0", 8)] and ll.logical_shape(l) == (8, 16)
    lin, offset = ll.to_linear(axe.Layout(TILE), (8, 16))
    assert lin == l and offset == {"warp": 5}
    assert l.broadcast_masks() == {"m": 0, "lane": 0, "warp": 0b110}
    assert l.is_surjective and not l.is_injective
    dup_free, shape = l.remove_duplicates().to_axe(offset)
    assert str(dup_free) == "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + 5@warp" and shape == (8, 16)
    # Every placement p of x satisfies layout(p - offset) == x.
    for x in range(128):
        for p in axe.Layout(TILE).forward(x):
            c = {a: v - offset.get(a, 0) for a, v in p.coord.items()}
            out = l.apply({d: c.get(d, 0) for d, _ in l.in_dims})
            assert out["dim1"] + 16 * out["dim0"] == x


def test_bridge_refusals():
    assert ll.linear_refusal(axe.Layout("S[(8,4):(1,8)]")) == ""
    why = ll.linear_refusal(axe.Layout("S[(4,3):(3@lane,1)]"))
    assert "not a power of two" in why
    with pytest.raises(axe.Error, match="not a power of two"):
        LL.from_axe(axe.Layout("S[(4,3):(3@lane,1)]"))
    with pytest.raises(axe.Error):
        LL("{m: [3]} -> [dim0:4]").to_axe()  # an XOR of two logical bits


@pytest.mark.parametrize("spec,shape,text", [
    # thread_spec.hpp's worked examples.
    ("blocked:1,4/8,4/4,1/1,0", (32, 32), "S[(4,8,2,4,4):(1@warp,4@lane,4,1@lane,1)]"),
    ("blocked:4/32/4/0", (512,), "S[(4,32,4):(1@warp,1@lane,1)]"),
    ("mma:2,2", (32, 16), "S[(2,2,8,2,4,2):(2@warp,2,4@lane,1@warp,1@lane,1)]"),
    ("wgmma:128/4,1", (64, 128), "S[(4,2,8,16,4,2):(1@warp,2,4@lane,4,1@lane,1)]"),
    ("slice:1:blocked:1,1/32,1/4,1/0,1", (128,), "S[(4,32):(1@warp,1@lane)]"),
    ('linear:{"reg":[[0,1]],"lane":[[0,2],[0,4],[1,0],[2,0],[4,0]],"warp":[[0,8]]}', (8, 16),
     "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)]"),
    ("S[(4,4):(1@lane,1)]", (2, 8), "S[(4,4):(1@lane,1)]"),
])
def test_thread_layout_examples(cli, spec, shape, text):
    got = ll.thread_layout(spec, shape)
    assert str(got) == text
    want = cli("thread-layout", spec, "--shape", ",".join(map(str, shape))).stdout.strip()
    assert want == text


def same_up_to_input_order(a, b):
    """a == b up to the order of the input dims and input dims of size 1 (which the Axe form has
    no iter for)."""
    def nonempty(l):
        return l.sublayout([n for n, s in l.in_dims if s > 1], l.out_names)
    a, b = nonempty(a), nonempty(b)
    return a == b.transpose_ins([n for n, _ in a.in_dims])


def test_thread_layout_functions_match_specs():
    b = ll.blocked_layout((32, 32), (1, 4), (8, 4), (4, 1), order=(1, 0))
    # thread_layouts.hpp: m -> columns 1,2 then the repeat column 16; lane -> columns 4,8 and rows
    # 1,2,4; warp -> rows 8,16 (bases in (column, row) order).
    assert b.bases == {"m": [(1, 0), (2, 0), (16, 0)],
                       "lane": [(4, 0), (8, 0), (0, 1), (0, 2), (0, 4)],
                       "warp": [(0, 8), (0, 16)]}
    for fn, spec, shape in [
        (lambda: b, "blocked:1,4/8,4/4,1/1,0", (32, 32)),
        (lambda: ll.mma_accumulator((32, 16), (2, 2)), "mma:2,2", (32, 16)),
        (lambda: ll.wgmma_accumulator((64, 128), 128, (4, 1)), "wgmma:128/4,1", (64, 128)),
        (lambda: ll.slice_layout(ll.blocked_layout((128, 1), (1, 1), (32, 1), (4, 1), (0, 1)), 1),
         "slice:1:blocked:1,1/32,1/4,1/0,1", (128,)),
    ]:
        direct = fn()
        via_spec = LL.from_axe(ll.thread_layout(spec, shape), shape)
        assert same_up_to_input_order(via_spec, direct), spec
    mma = ll.mma_accumulator((16, 8), (1, 1))
    assert mma.bases == {"m": [(1, 0), (0, 8)], "lane": [(2, 0), (4, 0), (0, 1), (0, 2), (0, 4)],
                         "warp": []}
    assert str(mma.to_axe()[0]) == "S[(2,32,2):(2,1@lane,1)]"


# ---- agreement with the calculator -----------------------------------------------------------------


@pytest.mark.parametrize("layout,shape", [
    (TILE, "8,16"),
    ("S[(8,4):(1,8)]", "8,4"),
    ("S[(4,32):(1@warp,1@lane)] + R[2:1@m]", "128"),
    ("S[(2,2,8,2,4,2):(2@warp,2,4@lane,1@warp,1@lane,1)]", "32,16"),
])
def test_linear_matches_cli(cli, layout, shape):
    j = json.loads(cli("linear", layout, "--shape", shape, "--json").stdout)
    shp = tuple(int(x) for x in shape.split(","))
    l, offset = ll.to_linear(axe.Layout(layout), shp)
    assert str(l) == j["linear"]
    assert {d: [list(reversed(b)) for b in bs] for d, bs in l.bases.items()} == j["in"]
    assert offset == j["offset"]
    assert {d: [i for i in range(64) if m >> i & 1] for d, m in l.broadcast_masks().items()} == \
        j["broadcast"]
    assert (l.is_injective, l.is_surjective) == (j["injective"], j["surjective"])
    assert str(l.remove_duplicates().to_axe(offset)[0]) == j["duplicate_free"]


@pytest.mark.parametrize("spec,shape", [
    ("blocked:1,4/8,4/4,1/1,0", "32,32"),
    ("mma:2,2", "32,16"),
    ("wgmma:64/4,1", "64,64"),
    ("blocked:2,2/4,8/2,2", "16,64"),
])
def test_thread_layout_json_matches_cli(cli, spec, shape):
    j = json.loads(cli("thread-layout", spec, "--shape", shape, "--json").stdout)
    shp = tuple(int(x) for x in shape.split(","))
    t = ll.thread_layout(spec, shp)
    assert str(t) == j["layout"]
    assert str(LL.from_axe(t, shp)) == j["linear"]


BANK_CASES = [
    ("S[(16,32):(32,1)]", STORE, "16,32", "f32", None),
    ("S[(16,32):(32,1)]", LOAD, "16,32", "f32", None),
    ("S[(16,32):(32,1)]", LOAD, "16,32", "f32", "4,1,4"),
    ("S[(32,32):(32,1)]", "blocked:1,4/8,4/4,1/1,0", "32,32", "f16", None),
    ("S[(32,16):(16,1)]", "mma:2,2", "32,16", "f32", "2,2,3"),
    ("S[(64,64):(64,1)]", "wgmma:64/4,1", "64,64", "bf16", "3,3,3"),
]


@pytest.mark.parametrize("smem,access,shape,dtype,swizzle", BANK_CASES)
def test_banks_match_cli(cli, smem, access, shape, dtype, swizzle):
    args = ["banks", smem, "--access", access, "--shape", shape, "--dtype", dtype]
    if swizzle:
        args += ["--swizzle", swizzle]
    shp = tuple(int(x) for x in shape.split(","))
    sw = tuple(int(x) for x in swizzle.split(",")) if swizzle else None
    b = ll.banks(axe.Layout(smem), access, shp, dtype, swizzle=sw)
    assert str(b) + "\n" == cli(*args).stdout
    j = json.loads(cli(*args, "--json").stdout)
    for k in ["vector_bytes", "instructions", "warps", "wavefronts", "ideal", "per_instruction",
              "f2_wavefronts"]:
        assert getattr(b, k) == j[k], k
    # The bank model's own laws: per-instruction wavefronts sum to the total, never below ideal.
    assert sum(b.per_instruction) == b.wavefronts >= b.ideal
    assert len(b.per_instruction) == b.warps * b.instructions


def costs_json(c):
    return {"store_wavefronts": c.store.wavefronts, "load_wavefronts": c.load.wavefronts,
            "store_vector_bytes": c.store.vector_bytes, "load_vector_bytes": c.load.vector_bytes,
            "store_instructions": c.store.instructions, "load_instructions": c.load.instructions}


SWIZZLE_CASES = [
    (STORE, LOAD, "16,32", "f32"),
    ("blocked:1,4/8,4/4,1/1,0", "blocked:4,1/4,8/1,4/0,1", "32,32", "f16"),
    ("mma:2,2", "blocked:1,4/8,4/4,1/1,0", "32,32", "f32"),
    ("wgmma:64/4,1", "blocked:1,8/8,4/4,1", "64,64", "bf16"),
]


@pytest.mark.parametrize("src,dst,shape,dtype", SWIZZLE_CASES)
def test_swizzle_matches_cli(cli, src, dst, shape, dtype):
    args = ["swizzle", "--from", src, "--to", dst, "--shape", shape, "--dtype", dtype]
    shp = tuple(int(x) for x in shape.split(","))
    p = ll.optimal_swizzle(src, dst, shp, dtype)
    assert str(p) + "\n" == cli(*args).stdout
    j = json.loads(cli(*args, "--json").stdout)
    assert [list(b) for b in p.offset_bases] == j["offset_bases"]
    assert {k: j[k] for k in costs_json(p.cost)} == costs_json(p.cost)
    assert p.origin == j["origin"] and str(p.shared) == j["linear"]
    assert (str(p.swizzle) if p.swizzle else None) == j["swizzle"]
    assert (str(p.axe_layout) if p.axe_layout else None) == j["axe_layout"]
    assert costs_json(p.row_major) == j["row_major"]
    if p.best_swizzle is None:
        assert j["best_swizzle"] is None and p.best_swizzle_cost is None
    else:
        assert dict(costs_json(p.best_swizzle_cost), swizzle=str(p.best_swizzle)) == \
            j["best_swizzle"]
    # The optimizer's postconditions.
    assert p.shared.is_invertible
    assert not p.row_major.better_than(p.cost)
    assert p.best_swizzle_cost is None or not p.best_swizzle_cost.better_than(p.cost)


CONVERT_CASES = [
    ("S[(4,4):(1@lane,1)]", "S[(4,4):(1,1@lane)]", "4,4", "f32", []),
    ("S[(4,4):(1@lane,1)]", "S[(4,4):(1,1@lane)]", "4,4", "f32", ["--choose", "shuffles"]),
    (STORE, LOAD, "16,32", "f32", []),
    (STORE, LOAD, "16,32", "f32", ["--swizzle", "4,1,4"]),
    ("blocked:1,4/8,4/4,1/1,0", "mma:2,2", "32,32", "f16", []),
    ("mma:2,2", "blocked:1,4/8,4/4,1/1,0", "32,32", "f32", ["--shared-budget", "1024"]),
    ("blocked:1,4/8,4/4,1/1,0", "blocked:1,4/8,4/4,1/1,0", "32,32", "f32", []),
]


def convert_kwargs(opts):
    k = {}
    for name, value in zip(opts[::2], opts[1::2]):
        if name == "--choose":
            k["choose"] = value
        elif name == "--swizzle":
            k["swizzle"] = tuple(int(x) for x in value.split(","))
        elif name == "--shared-budget":
            k["shared_budget"] = int(value)
    return k


@pytest.mark.parametrize("src,dst,shape,dtype,opts", CONVERT_CASES)
def test_convert_plan_matches_cli(cli, src, dst, shape, dtype, opts):
    args = ["convert-layout", "--from", src, "--to", dst, "--shape", shape, "--dtype", dtype] + opts
    shp = tuple(int(x) for x in shape.split(","))
    p = ll.convert_plan(src, dst, shp, dtype, simulate=True, **convert_kwargs(opts))
    assert str(p) + "\n" == cli(*args, "--simulate").stdout
    assert str(ll.convert_plan(src, dst, shp, dtype, **convert_kwargs(opts))) + "\n" == \
        cli(*args).stdout
    j = json.loads(cli(*args, "--simulate", "--json").stdout)
    assert p.mechanism == j["mechanism"] and p.simulated == j["simulated"] and p.steps == j["steps"]
    for k in ["register_moves", "selects", "shuffles", "shared_bytes", "repetitions", "barriers",
              "wavefronts", "store_wavefronts", "load_wavefronts", "store_instructions",
              "load_instructions", "issue_cost", "lanes", "warps"]:
        assert getattr(p, k) == j[k], k
    assert p.wavefronts == p.store_wavefronts + p.load_wavefronts
    assert (p.mechanism == "shared") == (p.shared_layout is not None)


# ---- value semantics and seeded random laws ---------------------------------------------------------


def random_layout(rng, ins=None, outs=None, surjective=False, max_bits=6):
    """A random layout; `outs` fixes the output dims [(name, size)]."""
    if outs is None:
        # Names in one global order, so that products of random layouts never conflict.
        names = sorted(rng.sample(["o1", "o2", "o3", "o4"], rng.randint(1, 3)))
        outs = [(n, 1 << rng.randint(0, 3)) for n in names]
    out_bits = sum(s.bit_length() - 1 for _, s in outs)
    if ins is None:
        names = sorted(rng.sample(["i1", "i2", "i3", "i4", "i5"], rng.randint(1, 3)))
        ins = [(n, rng.randint(0, max_bits // 2)) for n in names]
        if surjective:
            ins[0] = (ins[0][0], ins[0][1] + out_bits)
    while True:
        bases = {n: [tuple(rng.randrange(s) for _, s in outs) for _ in range(k)] for n, k in ins}
        l = LL(bases, outs, require_surjective=False)
        if not surjective or l.is_surjective:
            return l


def test_value_semantics():
    l = LL("{in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1:4, out2:4]")
    assert eval(repr(l), {"axe": axe}) == l
    assert str(ll.parse_linear_layout(str(l))) == str(l)
    assert pickle.loads(pickle.dumps(l)) == l and copy.deepcopy(l) == l and copy.copy(l) == l
    assert {l: 1}[LL(str(l))] == 1
    assert l != str(l) and l != LL("{in1: [(1,1),(0,1)]} -> [out1:4, out2:4]")
    with pytest.raises(AttributeError):
        l.rank = 3
    with pytest.raises(AttributeError):
        l.anything = 3
    # Dim order matters to ==.
    assert l != l.transpose_ins(["in2", "in1"]) and l == l.transpose_ins(["in1", "in2"])
    assert LL() == LL("{} -> []") and eval(repr(LL()), {"axe": axe}) == LL()
    # Bases and dims as JSON gives them (lists for pairs) build the same layout.
    assert LL([["in1", [[1, 1], [0, 1]]], ["in2", [[1, 0], [1, 2]]]], [["out1", 4], ["out2", 4]],
              require_surjective=False) == l


def test_random_value_semantics(rng):
    seen = {}
    for _ in range(300):
        l = random_layout(rng)
        assert eval(repr(l), {"axe": axe}) == l, (seed(), l)
        assert pickle.loads(pickle.dumps(l)) == l
        assert LL(l.bases, l.out_dims, require_surjective=False) == l
        seen.setdefault(str(l), l)
        assert hash(seen[str(l)]) == hash(l) and seen[str(l)] == l


def test_random_linearity_and_apply(rng):
    for _ in range(200):
        l = random_layout(rng)
        n = l.total_in_bits
        for _ in range(8):
            x, y = rng.randrange(1 << n), rng.randrange(1 << n)
            assert l.apply_flat(x ^ y) == l.apply_flat(x) ^ l.apply_flat(y), (seed(), l)
        assert table(l) == [l.apply_flat(x) for x in range(1 << n)]
        # rank + free bits == input bits (free_variable_masks' postcondition).
        assert l.rank + sum(bin(m).count("1") for m in l.free_variable_masks().values()) == n


def test_random_compose_invert_laws(rng):
    for _ in range(200):
        l = random_layout(rng)
        assert l.compose(identity_on(l.out_dims)) == l, (seed(), l)
        assert identity_on(l.in_dims).compose(l) == l
        s = random_layout(rng, surjective=True)
        # compose(pseudo_invert(s), s) is the identity on s's outputs.
        assert s.pseudo_invert().compose(s) == identity_on(s.out_dims), (seed(), s)
        # invert_and_compose: compose(invert_and_compose(a, b), b) == a.
        a = random_layout(rng, outs=s.out_dims)
        assert ll.invert_and_compose(a, s).compose(s) == a, (seed(), a, s)
        if s.is_invertible:
            assert s.compose(s.invert()) == identity_on(s.in_dims)
            assert s.invert().invert() == s
        else:
            with pytest.raises(axe.Error, match="not invertible"):
                s.invert()


def test_random_restructuring_laws(rng):
    for _ in range(200):
        l = random_layout(rng)
        total = 1 << l.total_in_bits
        # Reshape to one dim and back.
        assert l.reshape_ins([("flat", total)]).reshape_ins(l.in_dims) == l, (seed(), l)
        assert l.flatten_ins().reshape_ins(l.in_dims) == l
        assert l.flatten_outs().reshape_outs(l.out_dims) == l
        # Product then divide; the quotient carries the product's dims.
        c = random_layout(rng)
        p = l * c
        q = ll.divide_left(p, l)
        assert q is not None and l * q == p.transpose_ins([n for n, _ in (l * q).in_dims]) \
            .transpose_outs([n for n, _ in (l * q).out_dims]), (seed(), l, c)
        # sublayout on every dim is the layout; concat of two halves along inputs.
        assert l.sublayout(l.in_names, l.out_names) == l
        if len(l.in_names) >= 2:
            a = l.sublayout(l.in_names[:1], l.out_names)
            b = l.sublayout(l.in_names[1:], l.out_names)
            assert ll.concat_ins(a, b) == l
        # remove_duplicates: injective, same image.
        d = l.remove_duplicates()
        assert d.is_injective
        assert set(table(d)) == set(table(l))


def test_random_thread_layouts_and_conversions(rng):
    def blocked(shape):
        # A random blocked layout on a 2-D shape: 32 lanes, 1..4 warps.
        lanes = 1 << rng.randint(0, 5)
        tpw = (lanes, 32 // lanes)
        warps = 1 << rng.randint(0, 2)
        wpc = rng.choice([(warps, 1), (1, warps)])
        spt = (1 << rng.randint(0, 2), 1 << rng.randint(0, 2))
        order = rng.choice([(1, 0), (0, 1)])
        return (spt, tpw, wpc, order), wpc

    for _ in range(25):
        shape = (1 << rng.randint(3, 6), 1 << rng.randint(3, 6))
        (a, wa) = blocked(shape)
        while True:
            (b, wb) = blocked(shape)
            if wb[0] * wb[1] == wa[0] * wa[1]:
                break
        la = ll.blocked_layout(shape, *a)
        spec = "blocked:" + "/".join(",".join(map(str, v)) for v in a)
        ta = ll.thread_layout(spec, shape)
        # The spec and the function agree; the Axe bridge round-trips.
        assert same_up_to_input_order(LL.from_axe(ta, shape), la), (seed(), spec, shape)
        axe_layout, shp = la.to_axe()
        assert shp == shape and same_up_to_input_order(LL.from_axe(axe_layout, shape), la)
        lb = ll.blocked_layout(shape, *b)
        p = ll.convert_plan(la, lb, shape, rng.choice(["f32", "f16", "u8"]))
        assert p.simulate() == "", (seed(), a, b, shape)
        assert (p.mechanism == "none") == (LL.from_axe(la.to_axe()[0], shape) ==
                                          LL.from_axe(lb.to_axe()[0], shape))
        if rng.random() < 0.3:
            q = ll.convert_plan(la, lb, shape, choose="shared", shared_budget=1024, simulate=True)
            assert q.mechanism in ("none", "registers", "shared") and q.simulated


def test_bank_formula_matches_enumeration(rng):
    # f2_wavefronts (the F2 formula) == every entry of the enumeration, where it applies.
    shapes = [(16, 32), (32, 32), (64, 32)]
    for _ in range(30):
        shape = rng.choice(shapes)
        smem = axe.Layout("S[(%d,%d):(%d,1)]" % (shape[0], shape[1], shape[1]))
        lanes = 1 << rng.randint(0, 5)
        spec = "blocked:1,1/%d,%d/1,1/%s" % (lanes, 32 // lanes, rng.choice(["1,0", "0,1"]))
        bits = (shape[0] * shape[1]).bit_length() - 1
        sw = None
        if rng.random() < 0.6:
            b = rng.randint(1, 3)
            s = rng.randint(b, bits - b)
            sw = (b, rng.randint(0, bits - b - s), s)
        r = ll.banks(smem, spec, shape, "f32", swizzle=sw)
        if r.f2_wavefronts is not None:
            assert set(r.per_instruction) == {r.f2_wavefronts}, (seed(), spec, sw)


# ---- bad inputs ----------------------------------------------------------------------------------------


def test_bad_inputs_raise_clean_errors():
    l = LL("{a: [1]} -> [b:2]")
    for call, exc in [
        (lambda: LL("{a: [1] -> [b:2]"), axe.ParseError),
        (lambda: LL("{a: [3]} -> [b:2]"), axe.Error),            # value beyond the output size
        (lambda: LL({"a": [1]}, [("b", 3)]), axe.Error),          # not a power of two
        (lambda: LL({"a": [1], "a2": [1]}, ["b", "b"]), axe.Error),  # a name twice
        (lambda: LL({"a": "xy"}, ["b"]), TypeError),
        (lambda: LL({"a": [1]}, 5), TypeError),
        (lambda: LL({"a": [1]}), axe.Error),
        (lambda: LL(3), TypeError),
        (lambda: l.apply(a=2), axe.Error),
        (lambda: l.apply(a=-1), axe.Error),
        (lambda: l.apply(), axe.Error),
        (lambda: l.apply(c=0, a=0), axe.Error),
        (lambda: l.apply(a="x"), TypeError),
        (lambda: l.apply_flat(4), axe.Error),
        (lambda: l.basis("a", 5), axe.Error),
        (lambda: l.in_size("zz"), axe.Error),
        (lambda: l.compose(l.invert() * ll.identity_1d(2, "c", "d")), axe.Error),
        (lambda: l.reshape_ins([("x", 4)]), axe.Error),
        (lambda: l.transpose_ins(["a", "a"]), axe.Error),
        (lambda: l.sublayout(3, "b"), TypeError),
        (lambda: l.sublayout(["zz"], ["b"]), axe.Error),
        (lambda: ll.identity_1d(3, "a", "b"), axe.Error),
        (lambda: ll.identity_1d(2 ** 63 + 1, "a", "b"), TypeError),
        (lambda: ll.strided_1d(4, -1, "a", "b"), axe.Error),
        (lambda: ll.strided_1d(2 ** 40, 2 ** 40, "a", "b"), axe.Error),
        (lambda: ll.identity_1d(2 ** 40, "a", "b") * ll.identity_1d(2 ** 40, "c", "d"), axe.Error),
        (lambda: LL("{a: [1]} -> [b:2]").invert_and_compose(LL("{a: [0]} -> [b:2]")), axe.Error),
        (lambda: LL("{a: [0]} -> [b:2]").pseudo_invert(), axe.Error),
        (lambda: ll.from_swizzle((2, 3, 3), 100), axe.Error),
        (lambda: ll.from_swizzle((2, 3), 8), axe.Error),
        (lambda: ll.from_swizzle((1, 2, 300), 8), axe.Error),
        (lambda: LL.from_cute(3), TypeError),
        (lambda: LL.from_axe(axe.Layout("S[3:1]")), axe.Error),
        (lambda: LL.from_axe(axe.Layout("S[4:1]"), (8,)), axe.Error),
        (lambda: LL.from_axe("S[4:1]"), TypeError),
        (lambda: ll.slice_layout(l, 3), axe.Error),
        (lambda: ll.blocked_layout((32, 32), (1, 4), (8, 4), (4,)), axe.Error),
        (lambda: ll.blocked_layout((32, 32), (1, 4), (8, 8), (4, 1)), axe.Error),
        (lambda: ll.wgmma_accumulator((64, 64), 12, (4, 1)), axe.Error),
        (lambda: ll.thread_layout("blocked:1,4/8,4", (32, 32)), axe.ParseError),
        (lambda: ll.thread_layout("bogus:1", (32, 32)), axe.Error),
        (lambda: ll.thread_layout("mma:2,2", (33, 16)), axe.Error),
        (lambda: ll.thread_layout(5, (32, 32)), TypeError),
        (lambda: ll.banks("S[(16,32):(32,1)]", LOAD, (16, 32), "f33"), axe.Error),
        (lambda: ll.banks("S[(16,32):(32,1)]", LOAD, (16, 32), 3), axe.Error),
        (lambda: ll.banks("S[(16,32):(32,1)]", LOAD, (16, 32), 1.5), TypeError),
        (lambda: ll.banks("S[(16,32):(32,1)]", LOAD, (16, 16)), axe.Error),
        (lambda: ll.banks("S[(4096,4096):(4096,1)]", "blocked:1,1/32,1/1,1", (4096, 4096)),
         axe.Error),
        (lambda: ll.banks([0, 1, 2], "S[4:1@lane]", (4,)), axe.Error),
        (lambda: ll.banks([0, 1, 2, 3], "S[4:1@lane]", (4,), swizzle=(1, 0, 1)), axe.Error),
        (lambda: ll.banks(ll.identity_1d(2 ** 30, "m", "dim0"), "S[4:1@lane]", (4,)), axe.Error),
        (lambda: ll.shared_offsets(ll.identity_1d(2 ** 40, "m", "dim0")), axe.Error),
        (lambda: ll.optimal_swizzle(STORE, LOAD, (16, 32), "f128x"), axe.Error),
        (lambda: ll.optimal_swizzle("S[(16,32):(1,1@x)]", LOAD, (16, 32)), axe.Error),
        (lambda: ll.convert_plan(STORE, LOAD, (16, 32), choose="fastest"), axe.Error),
        (lambda: ll.convert_plan(STORE, LOAD, (16, 32), shared_budget=2), axe.Error),
        (lambda: ll.convert_plan(STORE, LOAD, (16, 32), shared=LL("{m: [1]} -> [dim0:2]")),
         axe.Error),
        (lambda: ll.convert_plan(STORE, LOAD, (16, 32), shared=ll.row_major_linear((16, 32)),
                                 swizzle=(1, 0, 1)), axe.Error),
        (lambda: ll.convert_plan(STORE, LOAD, (16, 32), shared=3.0), TypeError),
        # A shared layout must place every element at its own offset in m.
        (lambda: ll.convert_plan(STORE, LOAD, (16, 32), shared="S[(16,32):(1@lane,16)]"),
         axe.Error),
        (lambda: ll.convert_plan(STORE, LOAD, (16, 32), shared="S[(16,32):(0,16)]"), axe.Error),
        (lambda: ll.convert_plan(STORE, LOAD, (16, 32), shared="S[(16,16):(16,1)]"), axe.Error),
        (lambda: ll.slice_layout(LL("{a: [(1,0),(0,1)]} -> [dim0:2, ab:2]"), 0), axe.Error),
        (lambda: ll.convert_plan(STORE, "S[(16,32):(1,1@warp)]", (16, 32)), axe.Error),
        (lambda: ll.convert_plan(STORE, LOAD, "16,32"), axe.Error),
    ]:
        with pytest.raises(exc):
            call()


def test_error_messages_name_the_problem():
    with pytest.raises(axe.Error, match="not invertible"):
        LL("{a: [1,1]} -> [b:2]").invert()
    with pytest.raises(axe.Error, match="input dim 'a' not given"):
        LL("{a: [1]} -> [b:2]").apply()
    with pytest.raises(axe.Error, match="extent 12 of dim 0 in \\(12\\) is not a power of two"):
        LL.from_axe(axe.Layout("S[(4,3):(3@lane,1)]"))
    with pytest.raises(axe.ParseError) as e:
        LL("{a: [1]} -> [b:2")
    assert e.value.position > 0


def test_random_junk_raises_clean_errors(rng):
    alphabet = "{}[]():,->0123456789 abinoutmlanewarp"

    def junk():
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))

    def val():
        return rng.choice([0, 1, 2, 3, -1, 7, 2 ** 40, 2 ** 62, -(2 ** 63), None, "x", (1, 2), []])

    good = LL("{in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1:4, out2:4]")
    calls = [
        lambda: LL(junk()),
        lambda: LL({rng.choice(["a", "", "1x", "b c"]): [val() for _ in range(rng.randint(0, 3))]},
                   [(rng.choice(["o", "p", ""]), val())], require_surjective=rng.random() < 0.5),
        lambda: good.apply(**{rng.choice(["in1", "in2", "x"]): val() for _ in range(2)}),
        lambda: good.reshape_ins([(rng.choice(["a", "b"]), val()), ("c", val())]),
        lambda: good.reshape_outs({"a": val()}),
        lambda: good.basis(rng.choice(["in1", "zz"]), rng.randint(-5, 5)),
        lambda: ll.identity_1d(val(), "a", "b"),
        lambda: ll.zeros_1d(val(), "a", "b", val()),
        lambda: ll.strided_1d(val(), val(), "a", "b"),
        lambda: ll.from_swizzle((rng.randint(-3, 9), rng.randint(-3, 70), rng.randint(-70, 70)),
                                rng.randint(-3, 70)),
        lambda: ll.thread_layout(junk(), (val(), val())),
        lambda: ll.blocked_layout((val(), val()), (val(), val()), (val(),), (val(), val())),
        lambda: ll.mma_accumulator((val(), val()), (val(), val())),
        lambda: ll.slice_layout(good, rng.randint(-3, 3)),
        lambda: ll.banks(junk(), junk(), (val(), val()), rng.choice(["f32", "f16", 3, "x"])),
        lambda: ll.convert_plan(junk(), "S[(4,4):(1,1@lane)]", (val(), 4)),
        lambda: ll.compose(good, random_layout(rng)),
        lambda: ll.invert_and_compose(random_layout(rng), random_layout(rng)),
    ]
    raised = 0
    for _ in range(3000):
        try:
            rng.choice(calls)()
        except (axe.Error, TypeError, ValueError):
            raised += 1
    assert raised > 1000
