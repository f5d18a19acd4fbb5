#!/bin/bash
# For the next call on 2 x H200 (prepared 2026-11-28, fifth session; not run, the device time was
# spent): the rule that plans run as CUDA graphs copy every box with the kernels (2905a3a). Its
# test (TwoGpusCopyEngines, graphs off and on) and axe_cuda_tests whole on two GPUs; then the
# transitions whose boxes went to the copy engines, graphs on (the rule) against off (the engines
# in eager runs), alternated twice; then reshard_bench whole, to set beside ../regression_2026-11-28.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 260 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[==========\]|^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head
stage alternated
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
R="$O/alternated.txt"; : > "$R"
for round in 1 2; do for g in 1 0; do
  [ $((SECONDS - T0)) -gt 420 ] && break 2
  echo "## round $round AXE_CUDA_GRAPHS=$g" >> "$R"
  timeout 50 env AXE_CUDA_GRAPHS=$g $MPI -np 2 b/examples/reshard_bench --transitions S0-R,U-S0-R,U-S0-S1,S1-R --sizes 16M,256M,1G --dtypes f32,bf16 --iters 20 >> "$R" 2>&1
  echo "rc=$?" >> "$R"
done; done
grep -E "^## |^(S|R|P|U)" "$R" | awk '{print $1, $2, $3, $4, $5, $6}'
stage reshard
left=$((580 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left $MPI -np 2 b/examples/reshard_bench --json "$O/axe.json" > "$O/axe.txt" 2>&1; echo "reshard_bench rc=$?"
grep -E "^(S|R|P|U)" "$O/axe.txt" | awk '{print $1, $2, $3, $4, $5, $6}' | head -80
stage done
