#!/bin/bash
# For a next call on one GPU (prepared in the eighth session of 2026-11-28, not run: the device time
# was spent). The flat tiles again on every uneven row since axe_row_of_word took the 2- and 4-byte
# kernels' spill away (calls 3-4 had 8-16 bytes): the sweeps twice (flat rows beside the default
# tile), u8, bf16 and f32, then the copy tests (as run_call3.sh); then ncu of DRAM bytes and L2 hit
# rates with the caches kept between launches.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage bench
for round in 1 2; do
  for d in u8 bf16 f32; do
    timeout 90 b/bin/kernel_bench --copies --uneven-sweeps --dtype $d > /tmp/k.txt 2>&1; echo "$d rc=$?"
    cat /tmp/k.txt >> "$O/copies_$round.txt"
    grep -E "^(pack|unpack|copy) $d .*odd" /tmp/k.txt | grep -vE "cap [236]/SM|unit|engines" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
  done
done
stage tests
timeout 200 b/bin/axe_cuda_tests --gtest_filter='*CopyGenerated*:*CopyKernelsCompile*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|Failure|SKIPPED \] .*\(" "$O/tests.txt" | head -20
# Why the flat tiles lose back to back: DRAM bytes and L2 hit rates of every axe_copy launch with
# the caches kept between launches (--cache-control none), u8 and bf16, as CSV (one row a launch
# and metric; the 2-D default and the flat rows run in kernel_bench's order: default, flat 512 w8,
# 512 w4, 1024 w8, 1024 w4, 2048 w8, then the caps, for pack, unpack and copy).
for d in u8 bf16; do
  timeout 200 ncu --clock-control none --cache-control none --kernel-name regex:axe_copy --csv \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size \
    b/bin/kernel_bench --copies --uneven-sweeps --dtype $d --iters 2 --warmup 1 --reps 2 > "$O/ncu_steady_$d.csv" 2>&1
  echo "$d ncu rc=$?"
done
stage done
