#!/bin/bash
# Call 1 (ninth session): the cp.async experiment beside the runtime's u8 rows; the flat tiles
# again on bf16 / f32 rows; the copy tests (the refusal among them).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/unpack_exp .gpu/unpack_exp.cu 2>&1 | tail -3
( cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 && \
  cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1; echo "build rc=$?" > "$O/build_rc.txt" ) &
BP=$!
stage exp
timeout 120 /tmp/unpack_exp > "$O/exp.txt" 2>&1; echo "exp rc=$?"; cat "$O/exp.txt"
wait $BP; cat "$O/build_rc.txt"
stage bench
timeout 60 b/bin/kernel_bench --copies --no-sweeps --dtype u8 > "$O/copies_u8.txt" 2>&1; echo "u8 rc=$?"
grep -E "^(pack|unpack|copy) u8 .*odd" "$O/copies_u8.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
timeout 60 /tmp/unpack_exp > "$O/exp2.txt" 2>&1; echo "exp2 rc=$?"; grep -E "memcpy|reg 4|async 2 x4|async 4 x3|twin" "$O/exp2.txt"
for d in bf16 f32; do
  timeout 100 b/bin/kernel_bench --copies --uneven-sweeps --dtype $d > "$O/copies_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E "^(pack|unpack|copy) $d .*odd" "$O/copies_$d.txt" | grep -vE "cap [236]/SM|unit|engines|w4" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
stage tests
timeout 150 b/bin/axe_cuda_tests --gtest_filter='*CopyGenerated*:*CopyKernelsCompile*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|Failure|SKIPPED \] .*\(" "$O/tests.txt" | head -20
stage done
