#!/bin/bash
# 2 GPUs: reshard_bench (NCCL, one process per GPU) with the generated copy off and on, alternated
# twice, on the transitions that pack or unpack; the two-GPU tests and the multi-rank ctests.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
nvidia-smi -L
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage bench
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
R="$O/reshard.txt"; : > "$R"
for round in 1 2; do for g in 0 128; do
  echo "## round $round AXE_GENERATED_COPY_MIN_RUN=$g" >> "$R"
  AXE_GENERATED_COPY_MIN_RUN=$g timeout 90 $MPI -np 2 b/examples/reshard_bench --transitions S0-R,S1-R,S0-S1,S1-S0,R-S1,P-S1,U-S0-R,U-S0-S1 --sizes 64M,256M --dtypes f32,bf16 --iters 20 >> "$R" 2>&1
  echo "rc=$?" >> "$R"
done; done
stage tests
timeout 150 b/bin/axe_cuda_tests --gtest_filter='TwoGpus*:*Transitions*' > "$O/two_gpus.txt" 2>&1; echo "two-GPU tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/two_gpus.txt" | head
timeout 200 ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|stream|peer)|_cuda$|runtime_example_reshard" -E "10000" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*" "$O/ctest.txt" | head -20
stage done
