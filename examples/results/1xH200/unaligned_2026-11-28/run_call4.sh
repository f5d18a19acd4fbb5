#!/bin/bash
# 1 GPU: every transpose tile sweep (squares, 4096 x 65536, uneven) on this GPU, all dtypes.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage sweeps
timeout 400 build-gpu/bin/kernel_bench --transposes > "$O/sweeps.txt" 2>&1; echo "sweeps rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/sweeps.txt" | grep -v "generated [0-9]"
for d in f32 f16 f64 u8; do for k in "$d generated [0-9]" "$d wide generated" "$d uneven generated"; do
  echo "-- $k"; grep "transpose $k" "$O/sweeps.txt" | awk '{print $NF" "$0}' | sort -rn | head -5 | cut -d' ' -f2-
done; done
stage done
