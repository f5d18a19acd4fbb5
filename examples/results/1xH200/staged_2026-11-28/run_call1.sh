#!/bin/bash
# For the next call on one GPU (prepared 2026-11-28, fourth session; not run, the device time was
# spent): the staged-words transpose's GPU test, then the uneven transposes with the staged rows
# beside the runtime's (scalar) and the realigned ones, and Triton's on the same boxes.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 120 b/bin/axe_cuda_tests --gtest_filter='*Staged*:*Transpose*' > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head
stage transposes
for d in u8 f16 f32 f64; do
  [ $((SECONDS - T0)) -gt 420 ] && break
  timeout 120 b/bin/kernel_bench --transposes --uneven-sweeps --dtype $d > "/tmp/t_$d.txt" 2>&1; echo "$d rc=$?"
  cat "/tmp/t_$d.txt" >> "$O/transposes.txt"
  grep -E "^transpose .*\+1( generated| realigned| staged)" "/tmp/t_$d.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
stage triton
timeout 100 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; grep -E "\+1|uneven" "$O/triton.txt" | head -12
stage done
