#!/usr/bin/env python3
"""Summarise `ncu -i REP --page source --csv --print-source sass` output: for each kernel block,
the instructions with the most warp-stall samples and the samples summed by opcode.

    python3 sass_hot.py SASS.csv [--top 40]

Prepared in the seventh session of 2026-11-28 without ncu output at hand: the column names are
matched loosely ("Source", "Address", "Warp Stall Sampling (All Samples)", "Instructions
Executed"); where a block does not parse, its first lines are printed as they are."""
import collections
import csv
import io
import sys


def col(header, *words):
    for i, h in enumerate(header):
        if all(w.lower() in h.lower() for w in words):
            return i
    return None


def summarise(block, top):
    rows = list(csv.reader(io.StringIO("".join(block))))
    hi = next((i for i, r in enumerate(rows) if col(r, "source") is not None and col(r, "sampl") is not None), None)
    if hi is None:
        print("  (no table: first lines)")
        for line in block[:20]:
            print("  " + line.rstrip()[:200])
        return
    header = rows[hi]
    src, samp = col(header, "source"), col(header, "sampling", "all")
    if samp is None:
        samp = col(header, "sampl")
    addr, execd = col(header, "address"), col(header, "instructions executed")

    def num(r, i):
        try:
            return float(r[i].replace(",", "")) if i is not None and i < len(r) and r[i] else 0.0
        except ValueError:
            return 0.0

    body = [r for r in rows[hi + 1:] if src is not None and len(r) > src]
    total = sum(num(r, samp) for r in body)
    insts = sum(num(r, execd) for r in body)
    print(f"  {len(body)} instructions, {total:.0f} stall samples, {insts:.0f} warp instructions executed")
    by_op = collections.Counter()
    for r in body:
        by_op[r[src].split()[0] if r[src].split() else "?"] += num(r, samp)
    print("  samples by opcode: " + ", ".join(f"{op} {n / max(total, 1):.1%}" for op, n in by_op.most_common(15)))
    for r in sorted(body, key=lambda r: -num(r, samp))[:top]:
        a = r[addr] if addr is not None and addr < len(r) else ""
        print(f"  {num(r, samp) / max(total, 1):6.1%} {num(r, execd):>12.0f}  {a:>8}  {r[src][:100]}")


def main():
    path = sys.argv[1]
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 40
    block, name = [], "(start)"
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith('"Kernel Name"') or line.lower().startswith("kernel:") or "==PROF==" in line:
                if block:
                    print(name)
                    summarise(block, top)
                block, name = [], line.strip()[:160]
                continue
            block.append(line)
    if block:
        print(name)
        summarise(block, top)


if __name__ == "__main__":
    main()
