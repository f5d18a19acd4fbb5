#!/bin/bash
# 4 GPUs: the abort in TwoGpusPipeline.AllGatherInFourChunks_HandDerived ("double free or
# corruption"): repeated with CUDA graphs on and off, a backtrace, the rest of the gtests.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
stage build
cmake -S . -B b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage repeat
for g in 1 0 1 0 1 0; do
  AXE_CUDA_GRAPHS=$g timeout 60 b/bin/axe_cuda_tests --gtest_filter='TwoGpusPipeline.*' > /tmp/t.txt 2>&1; rc=$?
  echo "graphs=$g rc=$rc $(grep -E 'double free|corruption|PASSED|FAILED' /tmp/t.txt | head -2 | tr '\n' ' ')"
done | tee "$O/repeat.txt"
stage gdb
if command -v gdb > /dev/null; then
  AXE_CUDA_GRAPHS=1 timeout 90 gdb -batch -ex run -ex "thread apply all bt 12" --args b/bin/axe_cuda_tests --gtest_filter='TwoGpusPipeline.*' > "$O/gdb.txt" 2>&1
  grep -n -A30 "SIGABRT" "$O/gdb.txt" | head -80
else echo "no gdb"; fi
stage rest
AXE_CUDA_GRAPHS=1 timeout 200 b/bin/axe_cuda_tests --gtest_filter='-TwoGpusPipeline.*' > "$O/rest.txt" 2>&1; echo "rest rc=$?"; grep -E "^\[  FAILED|PASSED|FAILED|double free" "$O/rest.txt" | head
stage done
