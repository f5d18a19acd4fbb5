#!/usr/bin/env python3
"""tp_mlp.py: one SGD step of a 2-layer MLP  Y = relu(X W1) W2,  loss = 0.5/B |Y - T|^2, on a
dp x tp mesh with numpy, its resharding done by axe; checked against the same step on one rank
(float64, tolerance 1e-12). The Python twin of examples/tp_mlp.cpp:

  X  (B,Din)   S(0),R     batch split over dp
  W1 (Din,H)   R,S(1)     column-parallel: each tp rank holds H/tp columns
  W2 (H,Dout)  R,S(0)     row-parallel: each tp rank holds H/tp rows
  Hp = X W1          (B,H)     S(0),S(1)   no communication
  Yp = relu(Hp) W2   (B,Dout)  S(0),P      partial sums over tp
  Y  = Yp            (B,Dout)  S(0),R      all-reduce over tp (redistribute P -> R)
  dW2 = A^T dY       (H,Dout)  P,S(0)  ->  R,S(0)   gradient all-reduce over dp
  dW1 = X^T dHp      (Din,H)   P,S(1)  ->  R,S(1)   gradient all-reduce over dp

The weights are updated in place through their local views (t.local is axe's buffer, no copy);
the partial products enter axe with axe.from_local over the numpy arrays themselves.

  launch/axe-run -np 4 python3 examples/python/tp_mlp.py [--mesh dp=2,tp=2]
"""
import argparse
import sys

import numpy as np

import axe
from axe import Partial, Replicate, Shard


def reference(x, t, w1, w2, lr):
    hp = x @ w1
    a = np.maximum(hp, 0)
    y = a @ w2
    b = x.shape[0]
    loss = 0.5 * np.sum((y - t) ** 2) / b
    dy = (y - t) / b
    dw2 = a.T @ dy
    da = (dy @ w2.T) * (hp > 0)
    dw1 = x.T @ da
    return loss, w1 - lr * dw1, w2 - lr * dw2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mesh", default=None, help="dp=2,tp=2 (default: dp=2,tp=n/2 on n >= 4 ranks, else dp=1,tp=n)")
    args = ap.parse_args()
    axe.init()
    n = axe.world_size()
    mesh = axe.Mesh(args.mesh or ("dp=2,tp=%d" % (n // 2) if n >= 4 and n % 2 == 0 else "dp=1,tp=%d" % n))
    if mesh.ndim != 2:
        raise axe.Error("--mesh wants two axes (dp, tp), got %s" % mesh)
    dp, tp = mesh.shape
    B, Din, H, Dout, lr = 4 * dp, 6, 4 * tp, 5, 0.1
    g = np.random.default_rng(1234)  # the same data on every rank
    x, t = g.normal(0, 0.5, (B, Din)), g.normal(0, 0.5, (B, Dout))
    w1, w2 = g.normal(0, 0.5, (Din, H)), g.normal(0, 0.5, (H, Dout))

    X = axe.distribute(x, mesh, [Shard(0), Replicate()], src_rank=None)
    T = axe.distribute(t, mesh, "S(0),R", src_rank=None)
    W1 = axe.distribute(w1, mesh, [Replicate(), Shard(1)], src_rank=None)
    W2 = axe.distribute(w2, mesh, [Replicate(), Shard(0)], src_rank=None)

    # Forward.
    hp = X.local @ W1.local                   # (b,h): S(0),S(1)
    a = np.maximum(hp, 0)
    yp = a @ W2.local                         # (b,Dout): partial over tp
    Y = axe.from_local(yp, mesh, [Shard(0), Partial()], shape=(B, Dout)).redistribute([Shard(0), Replicate()])
    y = Y.local
    loss_local = np.array([0.5 * np.sum((y - T.local) ** 2) / B])
    dy = (y - T.local) / B
    # The loss is replicated over tp: sum it over dp through a partial tensor.
    loss = axe.from_local(loss_local, mesh, [Partial(), Replicate()], shape=(1,)).full_tensor()[0]

    # Backward: the weight gradients are partial over dp.
    dw2 = a.T @ dy                            # (h,Dout)
    da = (dy @ W2.local.T) * (hp > 0)
    dw1 = X.local.T @ da                      # (Din,h)
    dW2 = axe.from_local(dw2, mesh, [Partial(), Shard(0)], shape=(H, Dout)).redistribute("R,S(0)")
    dW1 = axe.from_local(dw1, mesh, [Partial(), Shard(1)], shape=(Din, H)).redistribute("R,S(1)")

    # SGD in place, through the local views.
    W1.local[...] -= lr * dW1.local
    W2.local[...] -= lr * dW2.local

    ref_loss, ref_w1, ref_w2 = reference(x, t, w1, w2, lr)
    err = max(abs(loss - ref_loss), np.max(np.abs(W1.full_tensor() - ref_w1)), np.max(np.abs(W2.full_tensor() - ref_w2)))
    worst = axe.from_local(np.array([err]), axe.Mesh(gpu=n), axe.Partial("max"), shape=(1,)).full_tensor()[0]
    ok = worst <= 1e-12
    if axe.rank() == 0:
        print("tp_mlp.py on %s: B=%d Din=%d H=%d Dout=%d  loss %.12f (reference %.12f)  max |diff| %.3g  %s" % (
            mesh, B, Din, H, Dout, loss, ref_loss, worst, "ok" if ok else "MISMATCH"))
    axe.finalize()
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except axe.Error as e:
        print("[rank %s] tp_mlp.py: %s" % (axe.rank() if axe.is_initialized() else "?", e), file=sys.stderr)
        sys.exit(2)
