#!/usr/bin/env python3
"""Generated tile kernels against Nsight Compute: their shared-memory wavefronts equal the bank
model's (linear/banks.hpp, linear/convert_plan.hpp).

    ncu --clock-control none --csv --log-file ncu.csv --kernel-name axe_tile_round_trip \
        --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum \
        build/bin/tile_bench --cases --once --json > model.json
    python3 examples/tile_ncu_check.py model.json ncu.csv

tile_bench --once launches each case's round-trip kernel once with ITERS = 1 (both conversions
once; the global loads and stores do not touch shared memory), and prints the model's
store_wavefronts and load_wavefronts of the two conversions. Stores are ncu's op_st; loads are
op_ld plus op_ldsm (on an H100 op_ldsm reads n/a and op_ld counts the ldmatrix wavefronts too). Prints one row per case and exits 1 when any differs.
"""
import csv
import json
import sys


def main(model_path, ncu_path):
    model = json.load(open(model_path))
    if isinstance(model, dict):
        model = [model]
    rows = [l for l in open(ncu_path) if l.startswith('"')]
    launches = {}  # launch id -> metric -> value
    for r in csv.DictReader(rows):
        name = r["Metric Name"]
        if not name.startswith("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_"):
            continue
        text = r["Metric Value"].replace(",", "")
        value = 0.0 if text == "n/a" else float(text)  # op_ldsm is n/a on sm_90: op_ld counts ldmatrix
        launches.setdefault(int(r["ID"]), {})[name.rsplit("_op_", 1)[1]] = value
    ids = sorted(launches)
    if len(ids) != len(model):
        print(f"{len(ids)} profiled launches for {len(model)} cases")
        return 1
    bad = 0
    print("| case | model store | ncu store | model load | ncu load (ld + ldsm) | |")
    print("|---|---|---|---|---|---|")
    for case, i in zip(model, ids):
        m = launches[i]
        st = m.get("st.sum", 0)
        ld = m.get("ld.sum", 0) + m.get("ldsm.sum", 0)
        ok = st == case["store_wavefronts"] and ld == case["load_wavefronts"]
        bad += not ok
        label = f"{case['shape']} {case['dtype']} {case['from']} -> {case['to']}"
        print(f"| {label} | {case['store_wavefronts']} | {st:.0f} | {case['load_wavefronts']} | "
              f"{ld:.0f} | {'ok' if ok else 'DIFFERS'} |")
    print(f"{len(model) - bad} of {len(model)} cases: ncu's wavefronts equal the model's")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
