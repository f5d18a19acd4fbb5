#!/bin/bash
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"; G=.gpu
$G/copy_exp all 2>&1 | tee "$O/copy_exp.txt"
KB=build/bin/kernel_bench
timeout 60 $KB --copies --no-sweeps --dtype f32 > "$O/copies_f32.txt" 2>&1; echo "f32 rc=$?"
grep -E " odd( generated)? " "$O/copies_f32.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
timeout 120 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "triton rc=$?"; grep f32 "$O/copy_triton.txt"
$G/copy_exp all 0 2>&1 | tee "$O/copy_exp_again.txt"
