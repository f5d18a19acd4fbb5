#!/bin/bash
# Session 2026-11-28 (third), call 3: the new defaults (copies: wide tiles; transposes: f32 64x64
# w4 8-byte vectors, f16 64x128 w4 along b first). All of axe_cuda_tests, the multi-rank CUDA
# ctests, kernel_bench --copies / --transposes without sweeps and Triton's, then u8/f64 sweeps.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DPython_EXECUTABLE="$(command -v python3)" > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage cuda_tests
timeout 150 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|tests ran|Failure" "$O/cuda_tests.txt" | head -8
stage ctest
left=$((330 - (SECONDS - T0))); [ $left -lt 60 ] && left=60
timeout $left ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|peer|stream)|runtime_example|_cuda$" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$? (limit $left s)"; grep -E "tests passed|\*\*\*Failed|Timeout" "$O/ctest.txt" | head -20
stage copies
timeout 60 b/bin/kernel_bench --copies --no-sweeps > "$O/copies.txt" 2>&1; echo "copies rc=$?"
grep -E "^(pack|unpack|copy) " "$O/copies.txt" | grep -v "engines\|unit"
timeout 60 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "copy triton rc=$?"; cat "$O/copy_triton.txt"
stage transposes
timeout 60 b/bin/kernel_bench --transposes --no-sweeps > "$O/kernel_bench.txt" 2>&1; echo "bench rc=$?"
grep -E "^transpose .*(\^2|65536|\+1) " "$O/kernel_bench.txt" | grep -v realigned
timeout 80 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage sweeps
for d in u8 f64 f32; do
  [ $((SECONDS - T0)) -gt 520 ] && break
  timeout $((580 - (SECONDS - T0))) b/bin/kernel_bench --transposes --dtype $d > /tmp/s_$d.txt 2>&1; echo "sweep $d rc=$?"; cat /tmp/s_$d.txt >> "$O/sweeps.txt"
  for k in "$d generated [0-9]" "$d wide generated"; do echo "-- $k"; grep "transpose $k" /tmp/s_$d.txt | awk '{print $NF" "$0}' | sort -rn | head -4 | cut -d' ' -f2-; done
done
stage done
