#!/bin/bash
# 1 GPU: transposes walked along b first. The transpose GPU tests (b-first tiles included),
# kernel_bench --transposes --uneven-sweeps (a-first and b-first, realigned and scalar, on
# R x 16383 +1), Triton's transposes right after.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 100 build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|tests ran" "$O/tests.txt" | head -12
stage bench
timeout 200 build-gpu/bin/kernel_bench --transposes --uneven-sweeps > "$O/transposes.txt" 2>&1; echo "bench rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/transposes.txt" | grep -v "generated [0-9]"
for d in f32 f16 f64 u8; do for o in "" "b-first"; do grep "transpose $d uneven generated" "$O/transposes.txt" | { if [ -n "$o" ]; then grep "b-first"; else grep -v "b-first"; fi; } | awk '{print $NF" "$0}' | sort -rn | head -3 | cut -d' ' -f2-; done; done
stage triton
timeout 150 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; grep -E "5003|16383" "$O/triton.txt"
stage done
