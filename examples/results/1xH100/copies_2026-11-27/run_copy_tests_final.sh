#!/bin/bash
# 1 GPU: the copy tests after the last fix (CopyEngine.CopyBoxes_GeneratedCopyMatchesHost keeps two
# rows a box), plain and under compute-sanitizer memcheck.
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
F='*CopyGenerated*:CopyEngine.*:*PackUnpackCopy*:GeneratedKernels.Copy*:*SecondSource*'
b/bin/axe_cuda_tests --gtest_filter="$F" > "$O/copy_tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) \]" "$O/copy_tests.txt"
timeout 200 compute-sanitizer --tool memcheck b/bin/axe_cuda_tests --gtest_filter="$F" > "$O/copy_memcheck.txt" 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) \]" "$O/copy_memcheck.txt"
