#!/bin/bash
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"; G=.gpu
timeout 120 python3 $G/tri_ptx.py 2>&1 | tail -5
grep -cE "ld.global" $O/tri_copy_f32.ptx; grep -E "ld.global|st.global" $O/tri_copy_f32.ptx | head -8
grep -E "LDG|STG" $O/tri_copy_f32.sass | head -40
$G/copy_exp all 0 2>&1 | tee "$O/copy_exp.txt" | grep -E "tri|2d reg 4|--"
