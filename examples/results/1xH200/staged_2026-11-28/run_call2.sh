#!/bin/bash
# Call 2 (same machine if warm): everything built; full axe_cuda_tests and the multi-rank CUDA ctests on HEAD.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 200 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \]' "$O/cuda_tests.txt")"
left=$((570 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|peer|stream)|runtime_example|_cuda$" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$? (limit $left s)"; grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$O/ctest.txt" | head -20
stage done
