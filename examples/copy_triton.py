#!/usr/bin/env python3
"""Triton's strided row copies against device memcpy, on the uneven boxes kernel_bench packs.

    python3 examples/copy_triton.py [--mib 256] [--json FILE]
    TRITON_INTERPRET=1 python3 examples/copy_triton.py --check   (no GPU: correctness only, small)

For each dtype (bf16, f32, f64, u8), the three uneven rows of kernel_bench --copies, with their names:
  pack   "run 2047 of 4095 odd":    rows of 2047 elements at pitch 4095, one element into the
                                    source buffer -> back to back (pitch 2047);
  unpack "run 2047 into 4095 odd":  the reverse, one element into the destination buffer;
  copy   "rows 4088 into 4095 odd": rows of 4088 at pitch 4096 -> pitch 4095, one element into
                                    the destination buffer;
with R = (MiB << 20) // (4095 * element size) rows, as kernel_bench. A Triton kernel copies a
BR x BC block of rows (tl.load / tl.store, masked); the best of a few block shapes and warp counts
is kept. Every row is at its own shift, so Triton moves one element per access, as the runtime's
exchanged tiles do for 4-byte elements (its destination words, for the other sizes, move 16-byte
words). Each time is the median over 30 pairs of CUDA events of 10 launches made
back to back between them, after 5 warm-ups; memcpy is a contiguous copy of the same payload (dst.copy_(src), cudaMemcpyAsync device
to device) in the same process. Prints one line per case, percent of memcpy as kernel_bench does
(bandwidth counts bytes read plus written), so the two can be set side by side from one session.
--check runs every case once on a few rows (on the CPU under TRITON_INTERPRET=1) and checks the
copy element by element, bytes outside the rows included. Needs torch and triton (the GPU machines
have them; CI does not).
"""
import argparse
import json
import sys

import torch
import triton
import triton.language as tl

from transpose_triton import median_ms  # the same timing: 10 calls per event pair, median of 30


@triton.jit
def copy_rows(src, dst, rows, cols, s_pitch, d_pitch, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(src + r[:, None].to(tl.int64) * s_pitch + c[None, :], mask=mask)
    tl.store(dst + r[:, None].to(tl.int64) * d_pitch + c[None, :], x, mask=mask)


BLOCKS = [(1, 2048, 4), (1, 4096, 8), (2, 2048, 8), (4, 1024, 4), (8, 512, 4), (16, 256, 4)]

# name, columns, source pitch and offset, destination pitch and offset (elements)
CASES = [
    ("pack", "run 2047 of 4095 odd", 2047, 4095, 1, 2047, 0),
    ("unpack", "run 2047 into 4095 odd", 2047, 2047, 0, 4095, 1),
    ("copy", "rows 4088 into 4095 odd", 4088, 4096, 0, 4095, 1),
]

DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64, "u8": torch.uint8}


def buffers(dtype, rows, cols, s_pitch, s_off, d_pitch, d_off, device):
    """Random source and poisoned destination buffers, and the expected destination."""
    n_src, n_dst = s_off + rows * s_pitch, d_off + rows * d_pitch
    if dtype.is_floating_point:
        src = torch.randn(n_src, device=device).to(dtype)
    else:
        src = torch.randint(0, 255, (n_src,), device=device, dtype=dtype)
    dst = torch.full((n_dst,), 7, device=device, dtype=dtype)
    expect = dst.clone()
    expect.as_strided((rows, cols), (d_pitch, 1), d_off).copy_(src.as_strided((rows, cols), (s_pitch, 1), s_off))
    return src, dst, expect


def launcher(src, dst, rows, cols, s_pitch, s_off, d_pitch, d_off, block):
    br, bc, warps = block
    grid = (triton.cdiv(rows, br), triton.cdiv(cols, bc))
    s, d = src[s_off:], dst[d_off:]
    return lambda: copy_rows[grid](s, d, rows, cols, s_pitch, d_pitch, BR=br, BC=bc, num_warps=warps)


def check():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for dname, dtype in DTYPES.items():
        for kind, _, cols, s_pitch, s_off, d_pitch, d_off in CASES:
            for block in BLOCKS[:1] + BLOCKS[-1:]:
                src, dst, expect = buffers(dtype, 5, cols, s_pitch, s_off, d_pitch, d_off, device)
                launcher(src, dst, 5, cols, s_pitch, s_off, d_pitch, d_off, block)()
                if not torch.equal(dst, expect):
                    print(f"copy_triton: {kind} {dname} block {block}: wrong result", file=sys.stderr)
                    sys.exit(1)
    print(f"copy_triton: every case correct ({device})")


def run(dname, case, payload):
    dtype = DTYPES[dname]
    kind, label, cols, s_pitch, s_off, d_pitch, d_off = case
    es = torch.tensor([], dtype=dtype).element_size()
    rows = payload // (4095 * es)
    src, dst, expect = buffers(dtype, rows, cols, s_pitch, s_off, d_pitch, d_off, "cuda")
    flat_src = torch.empty(rows * cols * es, device="cuda", dtype=torch.uint8)
    flat_dst = torch.empty_like(flat_src)
    memcpy = median_ms(lambda: flat_dst.copy_(flat_src))
    best = None
    for block in BLOCKS:
        launch = launcher(src, dst, rows, cols, s_pitch, s_off, d_pitch, d_off, block)
        launch()
        torch.cuda.synchronize()
        if not torch.equal(dst, expect):
            print(f"copy_triton: {kind} {dname} {label}: wrong result with block {block}", file=sys.stderr)
            sys.exit(1)
        ms = median_ms(launch)
        if best is None or ms < best[0]:
            best = (ms, f"{block[0]}x{block[1]} w{block[2]}")
    return {"kernel": f"{kind} {dname} {label}", "bytes": rows * cols * es, "ms": best[0], "memcpy_ms": memcpy,
            "ratio": memcpy / best[0], "block": best[1]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--json")
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    if args.check:
        check()
        return
    results = []
    for dname in DTYPES:
        for case in CASES:
            r = run(dname, case, args.mib << 20)
            results.append(r)
            print(f"triton {r['kernel']:<34} {r['bytes'] / 2**20:8.1f} MiB {r['ms']:.4f} ms "
                  f"{100 * r['ratio']:6.1f}% of memcpy (best block {r['block']})", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "triton": triton.__version__, "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
