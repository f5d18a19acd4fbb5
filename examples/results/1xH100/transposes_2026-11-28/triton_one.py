# One Triton transpose of the large uneven box (as examples/transpose_triton.py), for ncu.
import sys, torch, triton
sys.path.insert(0, "examples")
from transpose_triton import transpose_kernel
dt = {"f16": torch.float16, "u8": torch.uint8, "f32": torch.float32, "f64": torch.float64}[sys.argv[1]]
bm, bn, w = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
es = torch.tensor([], dtype=dt).element_size()
rows, cols = ((256 << 20) // (16383 * es) - 1) | 1, 16383
n = rows * cols
base = torch.randint(0, 100, (n + 1,), device="cuda").to(dt)
src = base[1:].view(rows, cols)
dst = torch.empty(n + 1, device="cuda", dtype=dt)[1:].view(cols, rows)
grid = (triton.cdiv(rows, bm), triton.cdiv(cols, bn))
for _ in range(3):
    transpose_kernel[grid](src, dst, rows, cols, BM=bm, BN=bn, num_warps=w)
torch.cuda.synchronize()
assert torch.equal(dst, src.t())
