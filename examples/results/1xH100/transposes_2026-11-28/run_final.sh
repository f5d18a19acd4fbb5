#!/bin/bash
# 1 GPU, final of 2026-11-28: unaligned transposes scalar, walked along b first (new default
# tiles). axe_cuda_tests, the multi-rank CUDA ctests that transpose (one GPU), kernel_bench
# --transposes --no-sweeps and Triton's transposes right after.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage cuda_tests
timeout 150 build-gpu/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|tests ran|SKIPPED \] [0-9]" "$O/cuda_tests.txt" | head -8
stage ctest
timeout 120 ctest --test-dir build-gpu -R "axe_cuda_mpi_[234]ranks$|axe_cuda_dist_tensor|runtime_example_reshard|axe_cuda_mpi_2ranks_peer$" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|\*\*\*Failed|\(Failed\)|Timeout" "$O/ctest.txt" | head -20
stage bench
timeout 120 build-gpu/bin/kernel_bench --transposes --no-sweeps > "$O/kernel_bench.txt" 2>&1; echo "bench rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/kernel_bench.txt"
stage triton
timeout 150 python3 examples/transpose_triton.py --json "$O/triton.json" > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage done
