#!/bin/bash
# Session 2026-11-28 (third), call 4: aligned transposes along b first by default (f32 64x64 w4
# v8, f64 64x32 w4, u8 128x128 w8 packed): GPU tests of the transposes, kernel_bench --transposes
# --no-sweeps, then Triton in the same call.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 60 build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|Failure" "$O/tests.txt" | head -12
stage bench
timeout 50 build-gpu/bin/kernel_bench --transposes --no-sweeps > "$O/kernel_bench.txt" 2>&1; echo "bench rc=$?"
grep -E "^transpose .*(\^2|65536|\+1) " "$O/kernel_bench.txt" | grep -v "realigned\|generated"
timeout 60 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage done
