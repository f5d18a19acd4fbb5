#!/bin/bash
# 4 GPUs: DeviceMemory and reads from the input with a GPU per rank. The multi-rank CUDA ctests
# (NCCL, _peer, _mixed), then redistribute_bench at 16M and 256M f32: NCCL alone, every step on
# the peer transport reading in place, and packed.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
nvidia-smi -L
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage ctest
timeout 240 ctest --test-dir build-gpu -R "axe_cuda_(mpi|dist_tensor)|runtime_example_reshard" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|\*\*\*Failed|Skipped" "$O/ctest.txt" | head -20
MPI="mpirun --allow-run-as-root --bind-to none"
stage bench
for cfg in nccl peer packed; do
  case $cfg in nccl) e="AXE_PEER_TRANSPORT=0";; peer) e="AXE_PEER_TRANSPORT=2";; packed) e="AXE_PEER_TRANSPORT=2 AXE_PEER_DIRECT=0";; esac
  env $e timeout 150 $MPI -np 4 build-gpu/examples/redistribute_bench --sizes 16M,256M --dtypes f32 --iters 20 > "$O/rb4_$cfg.txt" 2>&1; echo "$cfg rc=$?"
done
paste -d'|' <(cut -c1-50 "$O/rb4_nccl.txt") <(cut -c30-50 "$O/rb4_peer.txt") <(cut -c30-50 "$O/rb4_packed.txt") | tail -n +3
stage done
