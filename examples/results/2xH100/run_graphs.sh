#!/bin/bash
# 2 GPUs: CUDA graphs for cached plans (issue 17, host time). Build; one- and two-GPU gtests;
# the multi-rank CUDA tests; redistribute_bench host time at 1 MiB and times at 64/256 MiB with
# graphs on and off, alternated; the peer transport's and NCCL's calibrated per-step choice.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
stage build
cmake -S . -B b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_mpi_test axe_cuda_dist_tensor_test axe_cuda_stream_test axe_cuda_peer_fault \
  axe_cuda_tests axe_runtime_fault redistribute_bench reshard tp_mlp axe_cli >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
stage gtest
timeout 150 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "PASSED|FAILED|tests ran" "$O/cuda_tests.txt" | head
timeout 60 $MPI -np 2 b/bin/axe_cuda_mpi_test > "$O/mpi_2.txt" 2>&1; echo "mpi 2 rc=$?"; tail -2 "$O/mpi_2.txt"
stage bench
B="$O/graphs.txt"; : > "$B"
for round in 1 2; do
  for g in 1 0; do
    echo "## round $round: AXE_CUDA_GRAPHS=$g, 1 MiB" >> "$B"
    AXE_CUDA_GRAPHS=$g timeout 60 $MPI -np 2 b/examples/redistribute_bench --sizes 1M --dtypes f32 --iters 200 --warmup 20 >> "$B" 2>&1; echo "$round $g rc=$?"
  done
done
for g in 1 0; do
  echo "## AXE_CUDA_GRAPHS=$g, 64M 256M" >> "$B"
  AXE_CUDA_GRAPHS=$g timeout 60 $MPI -np 2 b/examples/redistribute_bench --sizes 64M,256M --dtypes f32 --iters 20 >> "$B" 2>&1; echo "big $g rc=$?"
done
stage ctest
timeout $((560 - (SECONDS - T0))) ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|stream|peer)|_cuda$|runtime_example_(reshard|tp_mlp)" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*|Not Run" "$O/ctest.txt" | head -20
stage done
