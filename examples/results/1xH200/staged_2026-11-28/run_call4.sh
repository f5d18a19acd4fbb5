#!/bin/bash
# One H200 (2026-11-28, sixth session): ncu of the u8 uneven transposes (one byte per access, the
# staged words raw and realigned, default tiles) on 16385 x 16383 +1 and 3001 x 5003 +1; then the
# A/B of pieces_u8.patch (run_next_pieces_u8.sh's loop).
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
P=examples/results/1xH200/row_ends_2026-11-28/pieces_u8.patch
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -A10 error "$O/build.log" | head -30; exit 1; }
cp b/bin/kernel_bench /tmp/kb_head
echo "== built head at $((SECONDS - T0)) s"
B="/tmp/kb_head --transposes --no-sweeps --dtype u8 --iters 1 --warmup 0 --reps 1"
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables"
timeout 200 ncu --clock-control none $S --kernel-name regex:axe_transpose $B > "$O/ncu_u8.txt" 2>&1; echo "ncu rc=$?"
grep -E "^  axe_transpose|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Shared Memory Configuration Size|Dynamic Shared" "$O/ncu_u8.txt" | awk '{$1=$1; print}' | paste -sd' ' | sed 's/axe_transpose/\naxe_transpose/g' | cut -c1-400
echo "== ncu done at $((SECONDS - T0)) s"
git apply $P || exit 1
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -A10 error "$O/build.log" | head -30; exit 1; }
cp b/bin/kernel_bench /tmp/kb_pieces
git apply -R $P
echo "== built pieces at $((SECONDS - T0)) s"
for round in 1 2; do for v in head pieces; do
  [ $((SECONDS - T0)) -gt 460 ] && break 2
  echo "## round $round $v" | tee -a "$O/ab.txt"
  timeout 40 /tmp/kb_$v --copies --no-sweeps --dtype u8 2>/dev/null | grep -E "u8 .*generated " | tee -a "$O/ab.txt" | awk '{print $1, $2, $(NF-3), $NF}'
  timeout 60 /tmp/kb_$v --transposes --no-sweeps --dtype u8 2>/dev/null | grep -E "\+1 (generated|staged)" | tee -a "$O/ab.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done; done
echo "== done at $((SECONDS - T0)) s"
