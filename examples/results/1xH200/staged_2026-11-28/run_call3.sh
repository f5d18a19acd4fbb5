#!/bin/bash
# Call 3 (2026-11-28, sixth session; the run_next.sh of the fifth, as run): the staged
# transpose's second version (loads in flight while it gathers, 32-bit gather) and its realigned
# variant, beside one element per access; their GPU test; then axe_cuda_tests whole and the
# multi-rank CUDA ctests (the graphed plans' copy-engine rule, 2905a3a, on one GPU).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage staged-test
timeout 120 b/bin/axe_cuda_tests --gtest_filter='*Staged*' > "$O/staged_tests.txt" 2>&1; echo "staged tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/staged_tests.txt" | head
stage transposes
for d in u8 f16 f32 f64; do
  [ $((SECONDS - T0)) -gt 300 ] && break
  timeout 100 b/bin/kernel_bench --transposes --uneven-sweeps --dtype $d > "/tmp/t_$d.txt" 2>&1; echo "$d rc=$?"
  cat "/tmp/t_$d.txt" >> "$O/transposes.txt"
  grep -E "^transpose .*\+1( generated| staged)" "/tmp/t_$d.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
stage tests
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
left=$((480 - (SECONDS - T0))); [ $left -lt 60 ] && left=60
timeout $left b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[==========\]|^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head
left=$((580 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|peer|stream)|runtime_example|_cuda$" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$? (limit $left s)"; grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$O/ctest.txt" | head -20
stage done
