#!/usr/bin/env python3
"""Joins bank_probe's model lines with Nsight Compute's counters (examples/bank_probe.cu).

    python3 examples/bank_probe_check.py model.txt ncu.csv

Case K launched probe_store as kernel 2K and probe_load as 2K + 1; each must take exactly the
model's wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum of the store,
..._op_ld.sum of the load). Prints a markdown table and exits 1 on any difference.
"""
import csv
import re
import sys


def main(model_path, ncu_path):
    cases = []
    for line in open(model_path):
        m = re.match(r"case (\d+): (.*), model (\d+)$", line.strip())
        if m:
            cases.append((int(m.group(1)), m.group(2), int(m.group(3))))
    rows = [l for l in open(ncu_path) if l.startswith('"')]
    counters = {}
    for r in csv.DictReader(rows):
        name = r["Metric Name"]
        if not name.startswith("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_"):
            continue
        counters[(int(r["ID"]), name.rsplit("_", 1)[1].split(".")[0])] = int(float(r["Metric Value"].replace(",", "")))
    bad = 0
    print("| case | layouts | model | ncu store | ncu load | |")
    print("|---|---|---|---|---|---|")
    for k, text, model in cases:
        st = counters.get((2 * k, "st"))
        ld = counters.get((2 * k + 1, "ld"))
        ok = st == model and ld == model
        bad += not ok
        print(f"| {k} | {text} | {model} | {st} | {ld} | {'ok' if ok else 'DIFFERS'} |")
    print(f"{len(cases) - bad} of {len(cases)} cases: ncu's wavefronts equal the model's")
    return 1 if bad or not cases else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
