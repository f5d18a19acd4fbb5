#!/bin/bash
# Third GPU session (2 GPUs): receivers unpacking straight from the senders' staging
# (AXE_PEER_UNPACK=1) against copy-then-unpack (0): the peer and mixed tests under both, the peer
# transport forced on both alternated, and the calibrated per-step choice against NCCL alone.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
stage build
cmake -S . -B b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_mpi_test axe_cuda_dist_tensor_test axe_cuda_peer_fault axe_runtime_fault \
  calibrate_bench redistribute_bench reshard >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 150 ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|peer)|_cuda$" -E "10000" --output-on-failure > "$O/ctest_unpack.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*" "$O/ctest_unpack.txt" | head
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
stage bench
B="$O/bench_unpack.txt"; : > "$B"
for round in 1 2; do
  for u in 0 1; do
    echo "## round $round: AXE_PEER_TRANSPORT=2 AXE_PEER_UNPACK=$u" >> "$B"
    AXE_PEER_TRANSPORT=2 AXE_PEER_UNPACK=$u timeout 40 $MPI -np 2 b/examples/redistribute_bench --sizes 64M,256M --dtypes f32 --iters 20 >> "$B" 2>&1; echo "$round $u rc=$?"
  done
done
AXE_CALIBRATE=/tmp/model.txt timeout 40 $MPI -np 2 b/examples/calibrate_bench --quick > "$O/calibrate_unpack.txt" 2>&1; cp /tmp/model.txt "$O/model_unpack.txt"
for E in AXE_PEER_TRANSPORT=0 AXE_COST_MODEL=/tmp/model.txt; do
  echo "## $E" >> "$B"
  env $E timeout 40 $MPI -np 2 b/examples/redistribute_bench --sizes 1M,64M,256M --dtypes f32 --iters 20 >> "$B" 2>&1; echo "$E rc=$?"
done
stage done
