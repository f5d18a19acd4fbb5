#!/bin/bash
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"; G=.gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for round in 1 2; do
  $G/h_old2d "2-D before"; $G/h_v1 "2-D whole loads"; $G/h_v2s "2-D inner stores"; $G/h_v2 "2-D whole+inner"
  $G/h_flat0 "flat before"; $G/h_flat "flat whole loads"
  $G/exp quick 0 | grep -E "reg 4"
done 2>&1 | tee "$O/gap.txt"
KB=build/bin/kernel_bench
ldd $KB | grep -i "not found"
for d in u8 bf16 f32; do
  timeout 60 $KB --copies --uneven-sweeps --dtype $d > "$O/copies_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E " odd( generated)? |2-D|wide" "$O/copies_$d.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
timeout 300 build/bin/axe_cuda_tests --gtest_filter='*Copy*:*copy*:LaunchGrid*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED)  \]|tests ran|FAILED" "$O/tests.txt" | head -20
