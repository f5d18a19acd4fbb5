#!/bin/bash
# 4 GPUs: the multi-rank CUDA tests and the mixed-transport test on 4 ranks; the one- and two-GPU
# gtests (the retired transpose, graphs); calibration; reshard_bench (NCCL bounds),
# redistribute_bench NCCL alone vs the calibrated per-step choice, and DTensor, f32.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
{ nvidia-smi -L; nvidia-smi topo -m; python3 -c 'import torch; print("torch", torch.__version__)'; } > "$O/env.txt" 2>&1
stage build
cmake -S . -B b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_mpi_test axe_cuda_dist_tensor_test axe_cuda_stream_test axe_cuda_peer_fault \
  axe_cuda_tests axe_runtime_fault redistribute_bench reshard_bench calibrate_bench reshard tp_mlp axe_cli >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
stage mixed4
timeout 90 $MPI -np 4 b/bin/axe_cuda_mpi_test mixed > "$O/mixed_4ranks.txt" 2>&1; echo "mixed 4 rc=$?"; tail -1 "$O/mixed_4ranks.txt"
stage bench
AXE_CALIBRATE=/tmp/model.txt timeout 90 $MPI -np 4 b/examples/calibrate_bench --quick > "$O/calibrate.txt" 2>&1; echo "calibrate rc=$?"; cp /tmp/model.txt "$O/model.txt"
timeout 120 $MPI -np 4 b/examples/reshard_bench --sizes 1M,256M,1G --dtypes f32 --json "$O/axe.json" > "$O/axe.txt" 2>&1; echo "reshard_bench rc=$?"
B="$O/redistribute.txt"; : > "$B"
for E in AXE_PEER_TRANSPORT=0 AXE_COST_MODEL=/tmp/model.txt; do
  echo "## $E" >> "$B"
  env $E timeout 90 $MPI -np 4 b/examples/redistribute_bench --sizes 1M,256M,1G --dtypes f32 --iters 20 --json "$O/e2e_${E%%=*}.json" >> "$B" 2>&1; echo "$E rc=$?"
done
timeout 150 torchrun --nproc_per_node 4 examples/dtensor_bench.py --sizes 1M,256M,1G --dtypes f32 --json "$O/dtensor.json" > "$O/dtensor.txt" 2>&1; echo "dtensor rc=$?"
python3 examples/compare_bench.py "$O/axe.json" "$O/dtensor.json" --e2e "$O/e2e_AXE_COST_MODEL.json" > "$O/compare.txt" 2>&1; echo "compare rc=$?"
stage gtest
timeout 240 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "PASSED|FAILED|tests ran" "$O/cuda_tests.txt" | head
stage ctest
timeout $((580 - (SECONDS - T0))) ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|stream|peer)|_cuda$|runtime_example_(reshard|tp_mlp)" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*|Not Run" "$O/ctest.txt" | head -20
stage done
