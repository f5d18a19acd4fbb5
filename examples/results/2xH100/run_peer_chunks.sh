#!/bin/bash
# 2 GPUs: peer chunks and reductions from the senders' staging (issue 17). Build, the multi-rank
# CUDA tests (chunks forced small too), the one-process CUDA tests, then redistribute_bench with
# the peer transport forced and chunk sizes alternated, against NCCL alone.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
{ nvidia-smi -L; nvidia-smi topo -m; } > "$O/env.txt" 2>&1
stage build
cmake -S . -B b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_mpi_test axe_cuda_dist_tensor_test axe_cuda_stream_test axe_cuda_peer_fault \
  axe_cuda_tests axe_runtime_fault redistribute_bench reshard >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
stage quick
timeout 60 env AXE_PEER_TRANSPORT=2 AXE_PEER_CHUNK_BYTES=4K AXE_TIMEOUT_S=20 $MPI -np 2 b/bin/axe_cuda_mpi_test > "$O/peer_chunks_2.txt" 2>&1; echo "peer chunks 2 rc=$?"; tail -3 "$O/peer_chunks_2.txt"
stage bench
B="$O/bench.txt"; : > "$B"
for round in 1 2; do
  for E in "AXE_PEER_TRANSPORT=0" "AXE_PEER_TRANSPORT=2 AXE_PEER_CHUNK_BYTES=0" "AXE_PEER_TRANSPORT=2 AXE_PEER_CHUNK_BYTES=16M" "AXE_PEER_TRANSPORT=2 AXE_PEER_CHUNK_BYTES=4M"; do
    echo "## round $round: $E" >> "$B"
    env $E timeout 60 $MPI -np 2 b/examples/redistribute_bench --sizes 64M,256M --dtypes f32 --iters 20 >> "$B" 2>&1; echo "$round $E rc=$?"
  done
done
stage gtest
timeout 150 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "PASSED|FAILED|tests ran" "$O/cuda_tests.txt" | head
stage ctest
timeout $((560 - (SECONDS - T0))) ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|stream|peer)|_cuda$|runtime_example_reshard" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*|Not Run" "$O/ctest.txt" | head -20
stage done
