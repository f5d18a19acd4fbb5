#!/usr/bin/env python3
"""compare_bench: reshard_bench (axe) and dtensor_bench (PyTorch DTensor) side by side (issue 5).

    python3 examples/compare_bench.py AXE.json DTENSOR.json [--e2e E2E.json] [--markdown]

Prints, per (transition, dtype, size): axe time, the raw NCCL / memcpy bound, axe/bound, DTensor
time, DTensor/axe, CPU overhead of both and axe's staging, then checks the issue's targets:
  - one-collective transitions <= 1.05 x bound, the others <= 1.15 x (at 256 MiB and 1 GiB);
  - faster than DTensor everywhere; >= 1.5 x on S0->S1, S1->S0, R->S1 and every 2-D transition;
  - 1 MiB: CPU overhead per call < 20 us and >= 3 x faster than DTensor end to end (with --e2e,
    a redistribute_bench JSON: the DistTensor::redistribute call's host time and end-to-end time,
    which is what a training script sees; without it, reshard_bench's executor time);
  - staging <= the destination's local size.
"""
import json
import sys

BIG = (256 << 20, 1 << 30)
FAST15 = {"S0->S1", "S1->S0", "R->S1"}


def human(n):
    for unit, v in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= v:
            return f"{n / v:g}{unit}"
    return str(n)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    md = "--markdown" in argv
    argv = [a for a in argv if a != "--markdown"]
    e2e = {"results": []}
    if "--e2e" in argv:
        i = argv.index("--e2e")
        e2e = json.load(open(argv[i + 1]))
        del argv[i:i + 2]
    emap = {(r["transition"], r["dtype"], r["size"]): r for r in e2e.get("results", [])}
    axe = json.load(open(argv[0]))
    dt = json.load(open(argv[1])) if len(argv) > 1 else {"results": []}
    dmap = {(r["transition"], r["dtype"], r["size"]): r for r in dt.get("results", [])}
    hdr = ["transition", "type", "size", "axe ms", "bound ms", "axe/bound", "DTensor ms", "DTensor/axe",
           "axe cpu us", "DT cpu us", "e2e ms", "e2e cpu us", "staging/dst", "axe steps"]
    rows, checks = [], []
    for r in axe["results"]:
        key = (r["transition"], r["dtype"], r["size"])
        d = dmap.get(key, {})
        dms = d.get("ms")
        ratio = r["axe_ms"] / r["bound_ms"] if r["bound_ms"] > 0 else float("nan")
        st = r["staging_bytes"] / r["dst_local_bytes"] if r["dst_local_bytes"] else float("nan")
        rows.append([r["transition"], r["dtype"], human(r["size"]), f"{r['axe_ms']:.4f}", f"{r['bound_ms']:.4f}",
                     f"{ratio:.2f}", f"{dms:.4f}" if dms else ("err" if "error" in d else "-"),
                     f"{dms / r['axe_ms']:.2f}" if dms else "-", f"{r['cpu_overhead_us']:.1f}",
                     f"{d['cpu_us']:.1f}" if "cpu_us" in d else "-",
                     f"{emap[key]['ms']:.4f}" if key in emap else "-",
                     f"{emap[key]['cpu_us']:.1f}" if key in emap else "-", f"{st:.2f}", r["steps"]])
        t = r["transition"]
        two_d = t.startswith("(") or t.startswith("interleaved")
        if r["size"] in BIG:
            lim = 1.05 if r.get("one_collective") else 1.15
            checks.append((f"{t} {r['dtype']} {human(r['size'])}: axe/bound {ratio:.2f} <= {lim}", ratio <= lim))
            if dms:
                need = 1.5 if (t in FAST15 or two_d) else 1.0
                checks.append((f"{t} {r['dtype']} {human(r['size'])}: DTensor/axe {dms / r['axe_ms']:.2f} "
                               f"{'>=' if need > 1 else '>'} {need}", dms / r["axe_ms"] >= need if need > 1
                               else dms > r["axe_ms"]))
        if r["size"] == 1 << 20:
            e = emap.get(key)
            cpu, ms, src = (e["cpu_us"], e["ms"], "redistribute") if e else (r["cpu_overhead_us"], r["axe_ms"], "executor")
            checks.append((f"{t} {r['dtype']} 1M: {src} cpu overhead {cpu:.1f} us < 20", cpu < 20))
            if dms:
                checks.append((f"{t} {r['dtype']} 1M: DTensor/axe ({src}) {dms / ms:.2f} >= 3", dms / ms >= 3))
        checks.append((f"{t} {r['dtype']} {human(r['size'])}: staging/dst {st:.2f} <= 1", st <= 1.0))
    if md:
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        w = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(hdr)]
        print("  ".join(h.ljust(w[i]) for i, h in enumerate(hdr)))
        for row in rows:
            print("  ".join(c.ljust(w[i]) for i, c in enumerate(row)))
    met = sum(1 for _, ok in checks if ok)
    print(f"\ntargets: {met}/{len(checks)} checks met")
    for msg, ok in checks:
        if not ok:
            print("  UNMET " + msg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
