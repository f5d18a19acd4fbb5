#!/bin/bash
# Session 2026-11-28 (fifth), call 3, 2 x H200 (prepared in the fourth session as run_next_switches.sh).
# What slowed S0->R uneven since 2026-11-22. It is not the generated copies: call 1 ran it equal
# with them off and on. So: the transition under each of the executor's switches, alternated twice;
# all of axe_cuda_tests with the time left (call 1 cut them at 120 s).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
git log --oneline -1
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage switches
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
R="$O/switches.txt"; : > "$R"
for round in 1 2; do for v in default AXE_CUDA_GRAPHS=0 AXE_COPY_ENGINE_MIN=0 AXE_OVERLAP_MIN=0 AXE_PEER_TRANSPORT=0; do
  echo "## round $round $v" >> "$R"
  if [ $v = default ]; then E=env; else E="env $v"; fi
  timeout 40 $E $MPI -np 2 b/examples/reshard_bench --transitions S0-R,U-S0-R,U-S0-S1 --sizes 256M --dtypes f32,bf16 --iters 20 >> "$R" 2>&1
  echo "rc=$?" >> "$R"
done; done
grep -E "^## |^(S|R|P|U)" "$R" | awk '{print $1, $2, $3, $4, $5, $6}'
stage tests
left=$((585 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|tests ran" "$O/cuda_tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \]' "$O/cuda_tests.txt")"
stage done
