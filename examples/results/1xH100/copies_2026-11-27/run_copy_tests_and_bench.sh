#!/bin/bash
# 1 GPU: the generated copy (copy_generated): its GPU tests, memcheck on them, kernel_bench
# (generated rows beside copy_boxes; wide u8 transpose tiles), Triton transposes after it.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_tests kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
b/bin/axe_cuda_tests --gtest_filter='*CopyGenerated*:GeneratedKernels.Copy*:*PackUnpackCopy*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; tail -5 "$O/tests.txt"
stage memcheck
timeout 200 compute-sanitizer --tool memcheck b/bin/axe_cuda_tests --gtest_filter='*CopyGenerated*' > "$O/memcheck.txt" 2>&1; echo "memcheck rc=$?"; tail -4 "$O/memcheck.txt"
stage bench
timeout 240 b/bin/kernel_bench --copies --json "$O/kernel_bench.json" > "$O/kernel_bench.txt" 2>"$O/kernel_bench.err"; echo "bench rc=$?"
grep -E "pack|copy|wide|u8 4096" "$O/kernel_bench.txt" | head -150
exit 0
timeout 120 python3 examples/transpose_triton.py --json "$O/triton.json" > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt" | tail -14
stage done
