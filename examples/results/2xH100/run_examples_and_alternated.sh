#!/bin/bash
# Second GPU session (2 GPUs): the PyTorch examples and tests on 2 GPUs (mpirun and torchrun, NCCL),
# the README's main job with 2 and 4 ranks, NCCL alone against the calibrated per-step choice
# (alternated), and the pytest counts.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
stage build
cmake -S . -B b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DPython_EXECUTABLE="$(command -v python3)" > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target calibrate_bench redistribute_bench reshard _axe >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
export PYTHONPATH=$PWD/b/python
L="$O/torch_2gpus.txt"; : > "$L"
stage torch
for np in 2 4; do echo "## mpirun -np $np b/examples/reshard" >> "$L"; timeout 60 $MPI -np $np b/examples/reshard >> "$L" 2>&1; echo "reshard np$np rc=$?"; done
for np in 2 4; do echo "## mpirun -np $np tp_mlp_torch.py" >> "$L"; timeout 90 $MPI -np $np -x PYTHONPATH python3 examples/python/tp_mlp_torch.py >> "$L" 2>&1; echo "tp_mlp_torch mpirun np$np rc=$?"; done
echo "## torchrun --nproc-per-node 2 tp_mlp_torch.py" >> "$L"; timeout 90 torchrun --nproc-per-node 2 examples/python/tp_mlp_torch.py >> "$L" 2>&1; echo "tp_mlp_torch torchrun rc=$?"
echo "## torchrun --nproc-per-node 2 --no-python b/examples/reshard" >> "$L"; timeout 60 torchrun --nproc-per-node 2 --no-python b/examples/reshard >> "$L" 2>&1; echo "reshard torchrun rc=$?"
(cd tests/python && timeout 200 $MPI -np 2 -x PYTHONPATH python3 -m pytest -q -rs --color=no -p no:cacheprovider test_torch_cuda.py) > "$O/pytest_torch_2gpus.txt" 2>&1; echo "pytest rc=$?"; grep -E "passed|failed" "$O/pytest_torch_2gpus.txt" | tail -2
stage bench
B="$O/bench2.txt"; : > "$B"
AXE_CALIBRATE=/tmp/model.txt timeout 60 $MPI -np 2 b/examples/calibrate_bench --quick > /dev/null 2>&1; cp /tmp/model.txt "$O/model.txt"
for round in 1 2; do
  for E in AXE_PEER_TRANSPORT=0 AXE_COST_MODEL=/tmp/model.txt; do
    echo "## round $round: $E" >> "$B"
    env $E timeout 90 $MPI -np 2 b/examples/redistribute_bench --sizes 1M,64M,256M --dtypes f32,bf16 --iters 20 >> "$B" 2>&1; echo "$round $E rc=$?"
  done
done
stage done
