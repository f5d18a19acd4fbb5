"""No input from Python crashes the interpreter: random text and random nested tuples fed to the
parsers, the layout and CuTe algebra and the planner raise axe.Error (bad values) or TypeError
(wrong types), nothing else (seeded; AXE_TEST_SEED replays)."""
import random

import axe
from axe import cute
from conftest import seed

ALPHABET = "SRP[]():,@+<>0123456789-_ xymgpu"


def test_random_inputs_raise_clean_errors():
    rng = random.Random(seed())

    def junk():
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24)))

    def tup(d=0):
        if d > 2 or rng.random() < 0.5:
            return rng.choice([0, 1, 2, 3, -1, 4, 8, 2 ** 40, None])
        return tuple(tup(d + 1) for _ in range(rng.randint(0, 3)))

    def lay():
        return cute.Layout(tup(), tup())

    base = axe.Layout("S[(4,6):(6,1)] + R[2:1@x]")
    calls = [
        lambda: axe.Layout(junk()),
        lambda: cute.Layout(junk()),
        lambda: cute.composition(lay(), tup()),
        lambda: cute.complement(lay(), tup()),
        lambda: cute.logical_divide(lay(), tup()),
        lambda: cute.blocked_product(lay(), tup()),
        lambda: cute.right_inverse(lay()),
        lambda: cute.left_inverse(lay()),
        lambda: cute.slice(tup(), lay()),
        lambda: cute.tile_to_shape(lay(), tup()),
        lambda: lay()(tup()),
        lambda: cute.Swizzle(rng.randint(-3, 40), rng.randint(-3, 40), rng.randint(-40, 40)),
        lambda: cute.ComposedLayout(junk()),
        lambda: axe.Mesh(junk()),
        lambda: axe.parse_placements(junk()),
        lambda: axe.plan(tup(), axe.Mesh(gpu=rng.randint(1, 5)), junk(), junk()),
        lambda: axe.Layout.make([(rng.randint(-2, 2 ** 62), rng.randint(-2 ** 62, 2 ** 62), rng.choice(["m", "x", ""]))]),
        lambda: axe.slice(base, tup(), [tup(), tup()]),
        lambda: axe.tile(base, tup(), axe.Layout("S[2:1]"), tup()),
        lambda: base.forward(tup(), shape=tup()),
        lambda: base.backward({"x": rng.randint(-5, 5), "m": rng.randint(-2 ** 62, 2 ** 62)}),
        lambda: axe.simulate((rng.randint(1, 9), rng.randint(1, 9)), axe.Mesh(gpu=rng.randint(1, 4)),
                             rng.choice(["S(0)", "S(1)", "R", "P", "S(2)"]), rng.choice(["S(0)", "R", "P(max)", "S(-1)"])),
    ]
    raised = 0
    for _ in range(4000):
        try:
            rng.choice(calls)()
        except (axe.Error, TypeError):
            raised += 1
    assert raised > 1000
