#!/bin/bash
# 1 GPU: after the realigned-row kernel retired: the whole axe_cuda_tests, the multi-rank CUDA
# ctests on the one GPU, memcheck on the copy tests, kernel_bench --copies.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 260 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head -12
timeout 120 compute-sanitizer --tool memcheck b/bin/axe_cuda_tests --gtest_filter='*CopyGenerated*:CopyEngine.*:*PackUnpackCopy*' > "$O/memcheck.txt" 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/memcheck.txt" | head -4
stage ctest
timeout 200 ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|stream|peer)|_cuda$|runtime_example_reshard" -E "10000" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*" "$O/ctest.txt" | head -20
stage bench
timeout 100 b/bin/kernel_bench --copies --json "$O/kernel_bench_copies.json" > "$O/kernel_bench_copies.txt" 2>/dev/null; echo "kernel_bench rc=$?"

MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
stage done
