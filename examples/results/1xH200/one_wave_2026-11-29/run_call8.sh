#!/bin/bash
# Call 8: source words loaded whole under one condition (row inside or box span): the copy GPU
# tests, then the uneven copies of u8, bf16, f32 and the u8 pack's 2-D rows.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 60 b/bin/axe_cuda_tests --gtest_filter='*CopyGenerated_MatchesHost*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED)  \]|FAILED TEST|Failure" "$O/tests.txt" | head
stage bench
for d in u8 bf16 f32; do
  timeout 30 b/bin/kernel_bench --copies --no-sweeps --dtype $d > "$O/copies_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E "^(pack|unpack|copy) $d .*odd( generated)? " "$O/copies_$d.txt" | awk '{print $1, $2, $(NF-3), $NF}' | paste -sd' '
done
timeout 40 b/bin/kernel_bench --copies --uneven-sweeps --dtype u8 --rows "pack u8" > "$O/pack_u8.txt" 2>&1; echo "rc=$?"
grep -E "^pack u8 .*(odd|odd generated|2-D.*|wide.*)$|odd( generated)? " "$O/pack_u8.txt" | grep -E "odd [0-9]|generated [0-9]|2-D|wide" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
stage done
