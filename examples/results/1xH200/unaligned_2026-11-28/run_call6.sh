#!/bin/bash
# 1 GPU: 8-byte vectors (TransposeTile::vector_bytes): transposes' GPU tests; u8 and f16 sweeps
# (v8 rows); then, 10 calls per timed sample: kernel_bench --transposes --no-sweeps with
# transpose_triton.py, kernel_bench --copies --no-sweeps with copy_triton.py.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 100 build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|tests ran" "$O/tests.txt" | head -12
stage sweeps
for d in u8 f16; do
  timeout 120 build-gpu/bin/kernel_bench --transposes --dtype $d > "$O/sweep_$d.txt" 2>&1; echo "sweep $d rc=$?"
  grep -E "^transpose $d [0-9]+\^2 |^transpose $d [0-9]+x65536 " "$O/sweep_$d.txt"
  for k in "$d generated [0-9]" "$d wide generated"; do echo "-- $k"; grep "transpose $k" "$O/sweep_$d.txt" | awk '{print $NF" "$0}' | sort -rn | head -6 | cut -d' ' -f2-; done
done
stage transposes
timeout 120 build-gpu/bin/kernel_bench --transposes --no-sweeps > "$O/kernel_bench_transposes.txt" 2>&1; echo "bench rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/kernel_bench_transposes.txt" | grep -v realigned
timeout 150 python3 examples/transpose_triton.py --json "$O/triton.json" > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage copies
timeout 100 build-gpu/bin/kernel_bench --copies --no-sweeps > "$O/copies.txt" 2>&1; echo "copies rc=$?"; grep -E "odd" "$O/copies.txt" | grep -v " unit\| engines"
timeout 100 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "copy_triton rc=$?"; cat "$O/copy_triton.txt"
stage done
