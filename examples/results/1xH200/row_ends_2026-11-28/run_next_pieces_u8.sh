#!/bin/bash
# For a call on one GPU (prepared 2026-11-28, fifth session; not run): row ends in naturally aligned
# pieces for 1-byte elements only (pieces_u8.patch in this folder, checked on the host emulator),
# against HEAD, on top of the whole waves: the u8 copies and the staged u8 transposes (which share
# the word helpers), two binaries alternated twice.
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
P=examples/results/1xH200/row_ends_2026-11-28/pieces_u8.patch
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -A10 error "$O/build.log" | head -30; exit 1; }
cp b/bin/kernel_bench /tmp/kb_head
git apply $P || exit 1
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -A10 error "$O/build.log" | head -30; exit 1; }
cp b/bin/kernel_bench /tmp/kb_pieces
git apply -R $P
echo "== built at $((SECONDS - T0)) s"
for round in 1 2; do for v in head pieces; do
  [ $((SECONDS - T0)) -gt 400 ] && break 2
  echo "## round $round $v" | tee -a "$O/ab.txt"
  timeout 40 /tmp/kb_$v --copies --no-sweeps --dtype u8 2>/dev/null | grep -E "u8 .*generated " | tee -a "$O/ab.txt" | awk '{print $1, $2, $(NF-3), $NF}'
  timeout 60 /tmp/kb_$v --transposes --no-sweeps --dtype u8 2>/dev/null | grep -E "\+1 (generated|staged)" | tee -a "$O/ab.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done; done
echo "== done at $((SECONDS - T0)) s"
