#!/bin/bash
# Session 2026-11-28 (third), call 2: GPU tests of the copies (tiles wider than a warp's vectors)
# and transposes (u8 default now packed); uneven copy sweeps with wide tiles, then Triton's copies;
# f32/f16 transpose sweeps with aligned b-first rows; the main transposes, then Triton's.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 200 build-gpu/bin/axe_cuda_tests --gtest_filter='*Copy*:*Transform*:*Transpose*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|Failure|tests ran" "$O/tests.txt" | head -12
stage copies
for d in f32 bf16 u8; do
  timeout 120 build-gpu/bin/kernel_bench --copies --dtype $d > /tmp/c_$d.txt 2>&1; echo "copies $d rc=$?"; cat /tmp/c_$d.txt >> "$O/copies.txt"
  for k in "pack $d run 2047" "unpack $d run 2047" "copy $d rows"; do echo "-- $k"; grep "^$k" /tmp/c_$d.txt | awk '{print $NF" "$0}' | sort -rn | head -4 | cut -d' ' -f2-; grep "^$k.* generated  " /tmp/c_$d.txt; done
done
timeout 100 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "copy triton rc=$?"; cat "$O/copy_triton.txt"
stage sweeps
for d in f32 f16; do
  timeout 120 build-gpu/bin/kernel_bench --transposes --dtype $d > /tmp/s_$d.txt 2>&1; echo "sweep $d rc=$?"; cat /tmp/s_$d.txt >> "$O/sweeps.txt"
  for k in "$d generated [0-9]" "$d wide generated"; do echo "-- $k"; grep "transpose $k" /tmp/s_$d.txt | awk '{print $NF" "$0}' | sort -rn | head -5 | cut -d' ' -f2-; done
done
stage main
timeout 90 build-gpu/bin/kernel_bench --transposes --no-sweeps > "$O/kernel_bench.txt" 2>&1; echo "bench rc=$?"
grep -E "^transpose .*(\^2|65536|\+1) " "$O/kernel_bench.txt"
timeout 150 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage done
