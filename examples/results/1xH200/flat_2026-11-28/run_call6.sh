#!/bin/bash
# Final check of the eighth session's HEAD: the copy GPU tests (the flat tiles' refusal included).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
echo "== tests at $((SECONDS - T0)) s"
timeout 200 b/bin/axe_cuda_tests --gtest_filter='*Copy*:*copy*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[==========\]|PASSED|FAILED|Failure" "$O/tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \] .* (' "$O/tests.txt")"
echo "== done at $((SECONDS - T0)) s"
