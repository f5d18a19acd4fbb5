#!/bin/bash
# The flat tiles with axe_row_of_word: the generated-copy GPU tests and the u8 copies.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_tests kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
echo "== bench at $((SECONDS - T0)) s"
timeout 30 b/bin/kernel_bench --copies --no-sweeps --dtype u8 > "$O/copies.txt" 2>&1; echo "u8 rc=$?"
grep -E "^(pack|unpack|copy) u8 .*odd( generated)? " "$O/copies.txt" | awk '{print $1, $2, $(NF-3), $NF}' | paste -sd' '
echo "== tests at $((SECONDS - T0)) s"
timeout 100 b/bin/axe_cuda_tests --gtest_filter='*CopyGenerated*:*CopyKernelsCompile*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[==========\]|PASSED|FAILED|Failure" "$O/tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \] .* (' "$O/tests.txt")"
echo "== done at $((SECONDS - T0)) s"
