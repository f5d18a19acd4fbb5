#!/bin/bash
# Session 2026-11-28 (fourth), call 3, 1 x H200: destination-word copies, rows' ends in pieces
# (.gpu/pieces.patch) against HEAD (element by element), two kernel_bench binaries alternated;
# the grid rows of the uneven copies (kernel_bench --copies --uneven-sweeps); Triton's copies.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_head
git apply .gpu/pieces.patch || exit 1
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_pieces
stage tests_pieces
timeout 100 b/bin/axe_cuda_tests --gtest_filter='*Copy*' > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests *Copy* (pieces) rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head
stage ab
for round in 1 2; do for v in head pieces; do
  echo "## round $round $v" >> "$O/ab.txt"
  timeout 60 /tmp/kb_$v --copies --no-sweeps 2>/dev/null | grep -E "odd( generated)? " >> "$O/ab.txt"
done; done
grep -E "^## |generated" "$O/ab.txt" | awk '{ if ($1 == "##") print; else print $1, $2, $3, $4, $5, $6, $NF }'
stage grid
for d in u8 bf16 f32; do
  [ $((SECONDS - T0)) -gt 430 ] && break
  timeout 90 /tmp/kb_head --copies --uneven-sweeps --dtype $d 2>/dev/null | grep -E "odd generated( grid|) " >> "$O/grid.txt"
done
awk '{print $1, $2, $3, $4, $5, $6, $7, $8, $NF}' "$O/grid.txt"
stage triton
timeout 60 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "copy triton rc=$?"; cat "$O/copy_triton.txt"
stage done
