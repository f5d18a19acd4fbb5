#!/bin/bash
# Seventh session of 2026-11-28, call 4 on one H200: the u8 destination words of one word a lane
# along the row (tile.a = 32 words: rows of 2047 bytes) at 4 blocks an SM (__launch_bounds__(256,
# 4): 64 registers, 8 bytes spilled, ptxas) instead of 3 (80 registers):
# u8_four_blocks.patch (this folder). kernel_bench of HEAD and HEAD + patch alternated three times
# on the uneven u8 rows; the copy GPU tests with the patch in.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
P=examples/results/1xH200/words_2026-11-28/u8_four_blocks.patch
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_head
git apply $P || exit 1
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_four
stage ab
export AXE_KERNEL_CACHE_DIR=/tmp/axe_kc
for round in 1 2 3; do for v in head four; do
  [ $((SECONDS - T0)) -gt 270 ] && break 2
  echo "## round $round $v u8" >> "$O/ab.txt"
  timeout 60 /tmp/kb_$v --copies --no-sweeps --dtype u8 > /tmp/ab.txt 2>&1; echo "rc=$?" >> /tmp/ab.txt
  cat /tmp/ab.txt >> "$O/ab.txt"
  grep -E "^(pack|unpack|copy) u8 .*odd( generated)? " /tmp/ab.txt | sed "s/^/$round $v /" | awk '{print $1, $2, $3, $(NF-3), $NF}' | paste -sd' '
done; done
unset AXE_KERNEL_CACHE_DIR
stage tests
left=$((390 - (SECONDS - T0))); [ $left -lt 60 ] && left=60
timeout $left b/bin/axe_cuda_tests --gtest_filter='*Copy*:*copy*' > "$O/copy_tests.txt" 2>&1; echo "copy tests rc=$? (limit $left s)"; grep -E "^\[==========\]|^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/copy_tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \] .* (' "$O/copy_tests.txt")"
git apply -R $P
stage done
