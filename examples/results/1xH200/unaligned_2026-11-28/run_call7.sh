#!/bin/bash
# 1 GPU, last of the session: one shared buffer per CTA when each CTA takes one tile; transposes'
# GPU tests, kernel_bench --transposes --no-sweeps and transpose_triton.py in the same call.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 60 build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|tests ran" "$O/tests.txt" | head -12
stage bench
timeout 60 build-gpu/bin/kernel_bench --transposes --no-sweeps > "$O/kernel_bench.txt" 2>&1; echo "bench rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/kernel_bench.txt" | grep -v "realigned\|generated"
timeout 60 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage done
