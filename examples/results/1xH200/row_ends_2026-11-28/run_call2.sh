#!/bin/bash
# Session 2026-11-28 (fourth), call 2, 1 x H200 (2 GPUs no longer lent): axe_cuda_tests; the copy
# rows against Triton with the rows' last words past whole tiles (9f508d6); peer_bench, 2 ranks on
# the GPU, generated copies off and on, alternated twice (the 1-GPU reshard regression check); ncu
# on the uneven copies with what time is left.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
git log --oneline -1 | cut -c1-60
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 150 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|tests ran" "$O/cuda_tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \]' "$O/cuda_tests.txt")"
stage copies
timeout 60 b/bin/kernel_bench --copies --no-sweeps > "$O/copies.txt" 2>&1; echo "copies rc=$?"
grep -E "^(pack|unpack|copy) " "$O/copies.txt" | grep -v "engines"
timeout 60 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "copy triton rc=$?"; cat "$O/copy_triton.txt"
stage peer
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
R="$O/peer_alternated.txt"; : > "$R"
for round in 1 2; do for g in off on; do
  [ $((SECONDS - T0)) -gt 420 ] && break 2
  echo "## round $round generated $g" >> "$R"
  if [ $g = off ]; then E="env AXE_GENERATED_COPY_MIN_RUN=0 AXE_REALIGN_MIN_ROW=0"; else E=env; fi
  timeout 45 $E $MPI -np 2 b/examples/peer_bench --sizes 256M --dtypes f32,bf16 >> "$R" 2>&1
  echo "rc=$?" >> "$R"
done; done
grep -E "^## |^(S|R|P|U)" "$R" | awk '{print $1, $2, $3, $4, $5, $6, $NF}'
stage ncu
if [ $((SECONDS - T0)) -lt 480 ] && command -v ncu > /dev/null; then
  timeout $((570 - (SECONDS - T0))) ncu --clock-control none --csv --page raw --kernel-name regex:"axe_copy" --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed b/bin/kernel_bench --copies --no-sweeps --mib 64 --iters 1 --warmup 0 --reps 1 > "$O/ncu.csv" 2>&1; echo "ncu rc=$?"; wc -l "$O/ncu.csv"
fi
stage done
