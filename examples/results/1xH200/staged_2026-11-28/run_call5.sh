#!/bin/bash
# Call 5 (2026-11-28, sixth session), on 3365361 with rotated_tried.patch applied: rotated accesses
# (sector-aligned warp accesses, one element a lane) on the uneven transposes, and u8 row ends in
# pieces (3365361): their GPU tests, then kernel_bench --transposes --uneven-sweeps for u8, f16,
# f32, f64, then axe_cuda_tests whole.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 150 b/bin/axe_cuda_tests --gtest_filter='*Transpose*:*Generated*:*Copy*' > "$O/tests_changed.txt" 2>&1; echo "changed tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|Failure" "$O/tests_changed.txt" | head; echo "skipped: $(grep -c 'SKIPPED \] .*(' "$O/tests_changed.txt")"
stage transposes
for d in u8 f16 f32 f64; do
  [ $((SECONDS - T0)) -gt 420 ] && break
  timeout 100 b/bin/kernel_bench --transposes --uneven-sweeps --dtype $d > "/tmp/t_$d.txt" 2>&1; echo "$d rc=$?"
  cat "/tmp/t_$d.txt" >> "$O/transposes.txt"
  grep -E "^transpose .*(\+1( generated| rotated)|uneven generated .*(rotated|scalar b-first))" "/tmp/t_$d.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
stage whole-tests
left=$((560 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$? (limit $left s)"; grep -E "^\[==========\]|^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head
stage done
