#!/bin/bash
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
KB=build/bin/kernel_bench
timeout 200 build/bin/axe_cuda_tests --gtest_filter='*CopyGenerated*:GeneratedKernels.Copy*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED)  \]|FAILED" "$O/tests.txt" | head -20
timeout 90 $KB --copies --uneven-sweeps --dtype f32 > "$O/copies_f32_sweeps.txt" 2>&1; echo "f32 rc=$?"
grep -E " odd( generated)?( words| exchange.*| wide.*)? " "$O/copies_f32_sweeps.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
timeout 60 $KB --copies --no-sweeps --dtype f32 > "$O/copies_f32.txt" 2>&1; echo "f32 rc=$?"
grep -E "^(pack|unpack|copy) f32 .*odd( generated| generated words)? " "$O/copies_f32.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
timeout 120 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "triton rc=$?"; grep f32 "$O/copy_triton.txt"
