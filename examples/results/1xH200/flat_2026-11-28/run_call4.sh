#!/bin/bash
# ncu of the uneven copies (u8, bf16): the default 2-D word tiles against flat 1024-word tiles.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage ncu
for d in u8 bf16; do
  timeout 200 ncu --clock-control none --kernel-name regex:axe_copy \
    --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats \
    --section MemoryWorkloadAnalysis_Tables --section InstructionStats \
    b/bin/kernel_bench --copies --uneven-sweeps --dtype $d --mib 64 --iters 1 --warmup 0 --reps 1 > "$O/ncu_$d.txt" 2>&1
  echo "$d ncu rc=$?"
  grep -E "^  axe_copy|Duration|DRAM Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  |Issue Slots Busy" "$O/ncu_$d.txt" | awk '{$1=$1; print}' | paste -sd' ' | sed 's/axe_copy/\naxe_copy/g' | sed -E 's/Context 1, Stream [0-9]+, Device 0, CC 9.0//; s/register\/thread//; s/ cycle / /; s/ inst / /' | cut -c1-250
done
stage done
