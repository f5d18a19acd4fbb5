#!/bin/bash
# Session 2026-11-28 (fourth), call 1, 2 x H200: reshard regression check of issue 19's kernels.
# reshard_bench (all default transitions, sizes, dtypes) to set beside examples/results/2xH200/axe.txt
# (2026-11-22, before the generated kernels); then the transitions that pack, unpack or copy with
# the generated copies off (AXE_GENERATED_COPY_MIN_RUN=0 AXE_REALIGN_MIN_ROW=0: the box kernel) and
# on, alternated twice; the two-GPU tests and the multi-rank CUDA ctests on 2 GPUs; then the f32
# copy sweeps (the grid N/SM rows) with what time is left.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
nvidia-smi -L
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage reshard
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
timeout 150 $MPI -np 2 b/examples/reshard_bench --json "$O/axe.json" > "$O/axe.txt" 2>&1; echo "reshard_bench rc=$?"
grep -E "^(S|R|P|U)" "$O/axe.txt" | awk '{print $1, $2, $3, $4, $5, $6}' | head -80
stage alternated
R="$O/alternated.txt"; : > "$R"
for round in 1 2; do for g in off on; do
  [ $((SECONDS - T0)) -gt 380 ] && break 2
  echo "## round $round generated $g" >> "$R"
  if [ $g = off ]; then E="env AXE_GENERATED_COPY_MIN_RUN=0 AXE_REALIGN_MIN_ROW=0"; else E=env; fi
  timeout 60 $E $MPI -np 2 b/examples/reshard_bench --transitions S1-R,S0-S1,S1-S0,R-S1,P-S1,U-S0-R,U-S0-S1 --sizes 64M,256M --dtypes f32,bf16 --iters 20 >> "$R" 2>&1
  echo "rc=$?" >> "$R"
done; done
grep -E "^## |^(S|R|P|U)" "$R" | awk '{print $1, $2, $3, $4, $5}'
stage tests
timeout 120 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|SKIPPED \]" "$O/cuda_tests.txt" | sort | uniq -c | head
left=$((560 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|stream|peer)|_cuda$|_mixed|runtime_example" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$? (limit $left s)"; grep -E "tests passed|\*\*\*|Failed" "$O/ctest.txt" | head -20
stage done
