#!/bin/bash
# Seventh session of 2026-11-28, call 5 on one H200: the staged transpose retired (68e3319, then
# uncommitted): the transpose, generated-kernel and launch-grid GPU tests, within what was left
# of the session's device time.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
echo "built at $((SECONDS - T0)) s"
left=$((215 - (SECONDS - T0))); [ $left -lt 20 ] && left=20
timeout $left b/bin/axe_cuda_tests --gtest_filter='*Transpose*:*Generated*:*LaunchGrid*' > "$O/tests.txt" 2>&1; echo "tests rc=$? (limit $left s)"
grep -E "^\[==========\]|^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \] .* (' "$O/tests.txt")"; grep -c "^\[       OK \]" "$O/tests.txt"
