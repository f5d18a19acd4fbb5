#!/bin/bash
# Call 5: the u8 pack's 2-D tile on one wave beside the flat default (one wave since 686f1cf).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage bench
f() { awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'; }
for round in 1 2; do
  timeout 100 b/bin/kernel_bench --copies --uneven-sweeps --dtype u8 > "$O/copies_u8_$round.txt" 2>&1; echo "u8 rc=$?"
  grep -E "^pack u8 .*odd" "$O/copies_u8_$round.txt" | grep -vE "unit|engines|w4" | f
done
stage done
