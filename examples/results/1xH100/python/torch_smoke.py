import os, sys, traceback
import torch
import axe
ok = True
try:
    axe.init()
    rank = axe.rank()
    torch.cuda.set_device(0)
    print(f"rank {rank}: backend {axe.backend()}", flush=True)
    mesh = axe.Mesh(gpu=axe.world_size())
    x = torch.arange(64 * 48, dtype=torch.float32, device="cuda").reshape(64, 48)
    for src, dst in [("S(0)", "R"), ("S(0)", "S(1)"), ("R", "S(1)"), ("S(1)", "S(0)")]:
        t = axe.distribute(x, mesh, src, src_rank=None)
        r = t.redistribute(dst)
        loc = r.local
        full = r.full_tensor()
        good = torch.equal(torch.as_tensor(full).to(x.device), x)
        print(f"rank {rank}: {src}->{dst}: local {type(loc).__name__} {getattr(loc,'device','?')} {tuple(loc.shape)}; full equal {good}", flush=True)
        ok &= bool(good)
    t = axe.distribute(x, mesh, "S(0)", src_rank=None)
    a, b = t.local, t.local
    print(f"rank {rank}: zero-copy local: same data_ptr {a.data_ptr() == b.data_ptr()}", flush=True)
    axe.finalize()
except Exception:
    traceback.print_exc()
    ok = False
print("TORCH SMOKE", "OK" if ok else "FAILED", flush=True)
sys.exit(0 if ok else 1)
