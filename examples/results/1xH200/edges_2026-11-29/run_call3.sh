#!/bin/bash
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"; G=.gpu
for round in 1 2; do
  $G/h_old2d "2-D before"; $G/h_n2d "2-D edge call"; $G/h_n2da "2-D never edge (unsafe)"
  $G/h_flat0 "flat before"; $G/h_nflat "flat edge call"; $G/h_nflata "flat never edge (unsafe)"
  $G/exp quick 0 | grep -E "reg 4"
done 2>&1 | tee "$O/gap.txt"
KB=build/bin/kernel_bench
timeout 60 $KB --copies --uneven-sweeps --dtype u8 > "$O/copies_u8.txt" 2>&1; echo "u8 rc=$?"
grep -E " odd( generated)? |2-D|wide" "$O/copies_u8.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
for d in bf16 f32; do
  timeout 60 $KB --copies --no-sweeps --dtype $d > "$O/copies_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E " odd( generated)? " "$O/copies_$d.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
timeout 300 build/bin/axe_cuda_tests --gtest_filter='*Copy*:*copy*:LaunchGrid*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED)  \]|FAILED" "$O/tests.txt" | head -20
