#!/usr/bin/env python3
"""tp_mlp_torch.py: one training step of a tensor-parallel 2-layer MLP in PyTorch (autograd, SGD),
its resharding done by axe; checked against the same step in one process (float64, 1e-12).
The PyTorch twin of tp_mlp.py: the same mesh and layouts, but the local work is torch's (autograd
through the local shards) and the communication enters autograd as Megatron's f/g operators:

  X  (B,Din)   S(0),R     batch split over dp
  W1 (Din,H)   R,S(1)     column-parallel: each tp rank holds H/tp columns (a leaf of autograd)
  W2 (H,Dout)  R,S(0)     row-parallel: each tp rank holds H/tp rows
  Yp = relu(X W1) W2  (B,Dout)  S(0),P       partial sums over tp
  Y  = g(Yp)          (B,Dout)  S(0),R       all-reduce over tp (redistribute P -> R); its
                                             gradient is the identity (every tp rank holds dY)
  loss.backward()     dW1, dW2 partial over dp  ->  R by redistribute (the data-parallel all-reduce)
  W -= lr dW          in place, through the local views (t.local is axe's buffer, no copy)

On GPUs (torch sees CUDA and this axe has the cuda backend) the tensors are CUDA tensors and axe's
work is ordered with torch's current stream by events; elsewhere CPU tensors on the host backend.

  launch/axe-run -np 4 python examples/python/tp_mlp_torch.py [--mesh dp=2,tp=2]
"""
import argparse
import sys

import torch

import axe
from axe import Partial, Replicate, Shard


class AllReduceOverTp(torch.autograd.Function):
    """g: the tp-partial product summed over tp (axe: S(0),P -> S(0),R); backward: the identity."""

    @staticmethod
    def forward(ctx, yp, mesh, shape):
        y = axe.from_local(yp.detach().contiguous(), mesh, [Shard(0), Partial()], shape=shape)
        return y.redistribute([Shard(0), Replicate()]).local.clone()

    @staticmethod
    def backward(ctx, dy):
        return dy, None, None


def all_reduce_over_dp(grad, mesh, shard, shape):
    """The data-parallel gradient all-reduce: a dp-partial shard of `shape` -> replicated over dp."""
    p = axe.from_local(grad.contiguous(), mesh, [Partial(), shard], shape=shape)
    return p.redistribute([Replicate(), shard]).local


def reference(x, t, w1, w2, lr):
    w1 = w1.clone().requires_grad_()
    w2 = w2.clone().requires_grad_()
    y = torch.relu(x @ w1) @ w2
    loss = 0.5 * ((y - t) ** 2).sum() / x.shape[0]
    loss.backward()
    with torch.no_grad():
        return loss.item(), w1 - lr * w1.grad, w2 - lr * w2.grad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mesh", default=None, help="dp=2,tp=2 (default: dp=2,tp=n/2 on n >= 4 ranks, else dp=1,tp=n)")
    args = ap.parse_args()
    axe.init()
    n = axe.world_size()
    dev = torch.device("cuda", axe.local_rank() % torch.cuda.device_count()) if axe.backend() == "cuda" else None
    if dev is not None:
        torch.cuda.set_device(dev)
    mesh = axe.Mesh(args.mesh or ("dp=2,tp=%d" % (n // 2) if n >= 4 and n % 2 == 0 else "dp=1,tp=%d" % n))
    if mesh.ndim != 2:
        raise axe.Error("--mesh wants two axes (dp, tp), got %s" % mesh)
    dp, tp = mesh.shape
    B, Din, H, Dout, lr = 4 * dp, 6, 4 * tp, 5, 0.1
    g = torch.Generator().manual_seed(1234)  # the same data on every rank
    x, t = (torch.randn(B, Din, generator=g, dtype=torch.float64), torch.randn(B, Dout, generator=g, dtype=torch.float64))
    w1, w2 = (torch.randn(Din, H, generator=g, dtype=torch.float64), torch.randn(H, Dout, generator=g, dtype=torch.float64))
    on = (lambda a: a.to(dev)) if dev is not None else (lambda a: a)

    X = axe.distribute(on(x), mesh, [Shard(0), Replicate()], src_rank=None)
    T = axe.distribute(on(t), mesh, "S(0),R", src_rank=None)
    W1 = axe.distribute(on(w1), mesh, [Replicate(), Shard(1)], src_rank=None)
    W2 = axe.distribute(on(w2), mesh, [Replicate(), Shard(0)], src_rank=None)

    # Forward and backward through the local shards; autograd sees the tp all-reduce as g.
    w1_local = W1.local.detach().requires_grad_()
    w2_local = W2.local.detach().requires_grad_()
    yp = torch.relu(X.local @ w1_local) @ w2_local
    y = AllReduceOverTp.apply(yp, mesh, (B, Dout))
    loss_local = 0.5 * ((y - T.local) ** 2).sum() / B
    loss_local.backward()
    # The loss is replicated over tp and split over dp: sum it over dp through a partial tensor.
    loss = axe.from_local(loss_local.detach().reshape(1), mesh, [Partial(), Replicate()], shape=(1,)).full_tensor()[0].item()

    # The data-parallel all-reduce of the gradients, then SGD in place through the local views.
    d_w1 = all_reduce_over_dp(w1_local.grad, mesh, Shard(1), (Din, H))
    d_w2 = all_reduce_over_dp(w2_local.grad, mesh, Shard(0), (H, Dout))
    with torch.no_grad():
        W1.local.sub_(lr * d_w1)
        W2.local.sub_(lr * d_w2)

    ref_loss, ref_w1, ref_w2 = reference(x, t, w1, w2, lr)
    err = max(abs(loss - ref_loss), (W1.full_tensor().cpu() - ref_w1).abs().max().item(),
              (W2.full_tensor().cpu() - ref_w2).abs().max().item())
    worst = axe.from_local(on(torch.tensor([err], dtype=torch.float64)), axe.Mesh(gpu=n), axe.Partial("max"),
                           shape=(1,)).full_tensor()[0].item()
    ok = worst <= 1e-12
    if axe.rank() == 0:
        print("tp_mlp_torch.py on %s (%s, %s): B=%d Din=%d H=%d Dout=%d  loss %.12f (reference %.12f)  "
              "max |diff| %.3g  %s" % (mesh, axe.backend(), "cuda tensors" if dev is not None else "cpu tensors",
                                       B, Din, H, Dout, loss, ref_loss, worst, "ok" if ok else "MISMATCH"))
    axe.finalize()
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except axe.Error as e:
        print("[rank %s] tp_mlp_torch.py: %s" % (axe.rank() if axe.is_initialized() else "?", e), file=sys.stderr)
        sys.exit(2)
