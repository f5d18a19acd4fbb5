#!/bin/bash
# Seventh session of 2026-11-28, call 3 on one H200: the leaner destination words
# (lean_words.patch, this folder; in the working tree when this ran): a word whose two source
# words lie inside its row is read with no span test, the row-end stores find their bounds again
# from the row, axe_shift16 selects in two steps; ptxas 75-80 registers, no spill.
# 1. Build all (the change in); kernel_bench of HEAD beside it (the patch reversed).
# 2. The two kernel_bench binaries alternated twice on the uneven u8 / bf16 / f32 rows.
# 3. axe_cuda_tests whole, then the multi-rank CUDA ctests on the one GPU.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
P=examples/results/1xH200/words_2026-11-28/lean_words.patch
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_lean
git apply -R $P || exit 1
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_head
git apply $P
stage ab
export AXE_KERNEL_CACHE_DIR=/tmp/axe_kc
for round in 1 2; do for v in head lean; do for d in u8 bf16 f32; do
  [ $((SECONDS - T0)) -gt 330 ] && break 3
  echo "## round $round $v $d" >> "$O/ab.txt"
  timeout 60 /tmp/kb_$v --copies --no-sweeps --dtype $d > /tmp/ab.txt 2>&1; echo "rc=$?" >> /tmp/ab.txt
  cat /tmp/ab.txt >> "$O/ab.txt"
  grep -E "^(pack|unpack|copy) $d .*odd( generated)? " /tmp/ab.txt | sed "s/^/$round $v /" | awk '{print $1, $2, $3, $4, $(NF-3), $NF}' | paste -sd' '
done; done; done
unset AXE_KERNEL_CACHE_DIR
stage tests
left=$((500 - (SECONDS - T0))); [ $left -lt 60 ] && left=60
timeout $left b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$? (limit $left s)"; grep -E "^\[==========\]|^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \] .* (' "$O/cuda_tests.txt")"
stage ctest
left=$((590 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|peer|stream)|runtime_example|_cuda$" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$? (limit $left s)"; grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$O/ctest.txt" | head -20
stage done
