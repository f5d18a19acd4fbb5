#!/bin/bash
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"; G=.gpu
$G/copy_exp all 0 2>&1 | tee "$O/copy_exp.txt"
KB=build/bin/kernel_bench
timeout 60 $KB --copies --no-sweeps --dtype f32 > "$O/copies_f32.txt" 2>&1; echo "f32 rc=$?"
grep -E " odd( generated)? " "$O/copies_f32.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
export TRITON_CACHE_DIR=/tmp/tcache; rm -rf $TRITON_CACHE_DIR
timeout 120 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "triton rc=$?"; grep f32 "$O/copy_triton.txt"
mkdir -p "$O/triton_ptx"
for f in $(find $TRITON_CACHE_DIR -name "*.ptx"); do
  j=$(dirname $f)/$(basename $f .ptx).json
  tag=$(python3 -c "import json,sys; d=json.load(open('$j')); print(d.get('num_warps'), d.get('constants', ''), str(d.get('signature',''))[:80])" 2>/dev/null)
  echo "$(basename $(dirname $f)) warps/consts: $tag | ld.v4 $(grep -c 'ld.global.*v4' $f) ld.b32 $(grep -cE 'ld.global(\.[a-z]+)*\.b32' $f) st.v4 $(grep -c 'st.global.*v4' $f) st.b32 $(grep -cE 'st.global(\.[a-z]+)*\.b32' $f) st.v2 $(grep -c 'st.global.*v2' $f)"
  cp $f "$O/triton_ptx/$(basename $(dirname $f)).ptx"
done 2>&1 | tee "$O/triton_ptx_summary.txt" | head -40
$G/copy_exp all 0 2>&1 | tee "$O/copy_exp_again.txt" | grep tri
