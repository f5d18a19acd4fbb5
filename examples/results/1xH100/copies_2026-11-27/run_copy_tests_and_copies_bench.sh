#!/bin/bash
# 1 GPU: destination words with head / tail pieces: the copy tests (plain, memcheck) and
# kernel_bench --copies (u8 uneven rows added).
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_tests kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
F='*CopyGenerated*:CopyEngine.*:*PackUnpackCopy*:GeneratedKernels.Copy*:*SecondSource*'
b/bin/axe_cuda_tests --gtest_filter="$F" > "$O/copy_tests.txt" 2>&1; echo "tests rc=$?"; grep -E "PASSED|FAILED" "$O/copy_tests.txt" | tail -3
timeout 200 compute-sanitizer --tool memcheck b/bin/axe_cuda_tests --gtest_filter='*CopyGenerated*' > "$O/copy_memcheck.txt" 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/copy_memcheck.txt" | tail -3
timeout 150 b/bin/kernel_bench --copies --json "$O/kernel_bench_copies.json" > "$O/kernel_bench_copies.txt" 2>/dev/null; echo "kernel_bench rc=$?"
grep -E "odd" "$O/kernel_bench_copies.txt" | grep -v "unit\|engines"
