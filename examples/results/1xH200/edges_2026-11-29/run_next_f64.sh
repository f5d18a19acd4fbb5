#!/bin/bash
# For a next call on one GPU (prepared in the tenth session, not run: its device time was spent).
# Whether 8-byte elements should take exchanged tiles too (the runtime takes them for 4-byte
# elements only): kernel_bench's uneven f64 rows (added this session) with the exchanged tiles
# swept beside the destination words, and Triton's masked row copy on the same rows (f64 added to
# copy_triton.py this session), in one call. Also the f32 rows again, for the same-call reference.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
for d in f64 f32; do
  timeout 120 b/bin/kernel_bench --copies --uneven-sweeps --dtype $d > "$O/copies_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E "^(pack|unpack|copy) $d .* odd( generated)?( words| exchange.*| wide.*)? " "$O/copies_$d.txt" |
    awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
timeout 150 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "triton rc=$?"; grep -E "f64|f32" "$O/copy_triton.txt"
