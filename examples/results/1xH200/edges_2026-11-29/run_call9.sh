#!/bin/bash
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
KB=build/bin/kernel_bench
timeout 300 build/bin/axe_cuda_tests --gtest_filter='*Copy*:*copy*:LaunchGrid*:GeneratedKernels*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED)  \]|FAILED|SKIPPED \]" "$O/tests.txt" | sort | uniq -c | head -20
timeout 90 $KB --copies --uneven-sweeps --dtype f32 > "$O/copies_f32_sweeps.txt" 2>&1; echo "f32 rc=$?"
grep -E " odd( generated)?( words| exchange.*)? " "$O/copies_f32_sweeps.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
for d in f32 bf16 u8; do
  timeout 60 $KB --copies --no-sweeps --dtype $d > "$O/copies_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E "^(pack|unpack|copy) $d .*odd( generated| generated words)? " "$O/copies_$d.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
timeout 120 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/copy_triton.txt"
