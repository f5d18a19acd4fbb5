#!/bin/bash
# One GPU session (2 GPUs): build what runs here; the mixed-transport test; calibration and the
# transport benchmarks; torch; the multi-rank CUDA regression tests. Each stage bounded; logs
# under $OUT (they come back even when the call is cut short).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
{ nvidia-smi -L; nvidia-smi topo -m; python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.device_count())'; mpirun --version | head -1; } > "$O/env.txt" 2>&1
stage build
cmake -S . -B b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DPython_EXECUTABLE="$(command -v python3)" > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_mpi_test axe_cuda_dist_tensor_test axe_cuda_stream_test axe_cuda_peer_fault \
  axe_cuda_tests axe_runtime_fault calibrate_bench redistribute_bench reshard _axe >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage mixed
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
timeout 120 $MPI -np 2 b/bin/axe_cuda_mpi_test mixed > "$O/mixed.txt" 2>&1; echo "mixed rc=$?"; tail -2 "$O/mixed.txt"
stage bench
B="$O/bench.txt"; : > "$B"
AXE_CALIBRATE=/tmp/model.txt timeout 150 $MPI -np 2 b/examples/calibrate_bench >> "$B" 2>&1; echo "calibrate rc=$?"; cat /tmp/model.txt >> "$B"
for E in AXE_PEER_TRANSPORT=0 AXE_COST_MODEL=/tmp/model.txt AXE_PEER_TRANSPORT=2; do
  echo "## $E" >> "$B"
  env $E timeout 90 $MPI -np 2 b/examples/redistribute_bench --sizes 1M,64M,256M --dtypes f32 --iters 20 >> "$B" 2>&1; echo "$E rc=$?"
done
for each in 1 0 1 0; do
  echo "## cpu: AXE_AGREE_EACH_CALL=$each" >> "$B"
  AXE_AGREE_EACH_CALL=$each timeout 60 $MPI -np 2 b/examples/redistribute_bench --sizes 1M --dtypes f32 --iters 200 --warmup 20 >> "$B" 2>&1
done
stage python
PYTHONPATH=$PWD/b/python timeout 90 $MPI -np 2 -x PYTHONPATH python3 examples/python/overhead_bench.py --torch --mib 1 > "$O/overhead.txt" 2>&1; echo "overhead rc=$?"
timeout 200 ctest --test-dir b -R "torch_cuda" --output-on-failure > "$O/torch.txt" 2>&1; echo "torch rc=$?"; tail -4 "$O/torch.txt"
stage ctest
timeout $((570 - (SECONDS - T0))) ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|stream|peer)|_cuda$|TransportChoice|runtime_example_reshard" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*|Not Run" "$O/ctest.txt" | head -20
stage done
