#!/bin/bash
# 1 GPU: kernel_bench --transposes --no-sweeps, then transpose_triton.py (memcpy baseline now on
# aligned buffers) in the same call; kernel_bench --copies --dtype f32 with the copy sweeps (the
# copy rows 4088 -> 4095 included), then copy_triton.py.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage transposes
timeout 120 build-gpu/bin/kernel_bench --transposes --no-sweeps > "$O/kernel_bench_transposes.txt" 2>&1; echo "bench rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/kernel_bench_transposes.txt"
stage triton
timeout 150 python3 examples/transpose_triton.py --json "$O/triton.json" > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage copies
timeout 150 build-gpu/bin/kernel_bench --copies --dtype f32 > "$O/copies_f32.txt" 2>&1; echo "copies rc=$?"
grep -E "odd" "$O/copies_f32.txt"
timeout 120 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "copy_triton rc=$?"; cat "$O/copy_triton.txt"
stage done
