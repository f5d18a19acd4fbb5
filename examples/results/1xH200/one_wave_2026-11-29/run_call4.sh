#!/bin/bash
# Call 4: HEAD (flat tiles on one wave) against the experiment with row ends in pieces.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
git log --oneline -1
nvcc -O3 -std=c++17 -arch=sm_90a -DPIECES -o /tmp/unpack_exp .gpu/unpack_exp.cu 2>&1 | tail -3
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage bench
f() { awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'; }
for round in 1 2; do
  timeout 100 /tmp/unpack_exp quick 0 > "$O/exp_pack_$round.txt" 2>&1; cat "$O/exp_pack_$round.txt"
  timeout 60 b/bin/kernel_bench --copies --no-sweeps --dtype u8 > "$O/copies_u8_$round.txt" 2>&1; echo "u8 rc=$?"
  grep -E "^(pack|unpack|copy) u8 .*odd" "$O/copies_u8_$round.txt" | grep -vE "unit|engines" | f
done
stage tests
timeout 150 b/bin/axe_cuda_tests --gtest_filter='LaunchGrid*:*CopyGenerated*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED)  \]|FAILED TEST|Failure|SKIPPED \] .*\(" "$O/tests.txt" | head -20
stage done
