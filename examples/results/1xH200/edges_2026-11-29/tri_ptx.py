# Compile Triton's row copy for the f32 copy case (block 1x4096, 8 warps) and dump its PTX / SASS.
import os, subprocess, sys
sys.path.insert(0, "examples")
import torch, triton
import copy_triton as ct
out = os.environ.get("OUT", "/tmp/out")
rows = (256 << 20) // (4 * 4096)
src, dst, expect = ct.buffers(torch.float32, rows, 4088, 4096, 0, 4095, 1, "cuda")
grid = (rows, 1)
k = ct.copy_rows[grid](src[0:], dst[1:], rows, 4088, 4096, 4095, BR=1, BC=4096, num_warps=8)
torch.cuda.synchronize()
print("correct", bool(torch.equal(dst, expect)))
open(f"{out}/tri_copy_f32.ptx", "w").write(k.asm["ptx"])
open(f"{out}/tri_copy_f32.cubin", "wb").write(k.asm["cubin"])
print("n_regs", getattr(k, "n_regs", None), "spills", getattr(k, "n_spills", None))
sass = subprocess.run(["cuobjdump", "-sass", f"{out}/tri_copy_f32.cubin"], capture_output=True, text=True).stdout
open(f"{out}/tri_copy_f32.sass", "w").write(sass)
print("sass lines", len(sass.splitlines()))
