#!/bin/bash
# 1 GPU, first call of 2026-11-28b: transposes' GPU tests (fit path), kernel_bench --copies then
# copy_triton.py (Triton on the uneven copies), u8 uneven sweeps (Triton's 32x128 shape), ncu of
# ours and Triton's u8 transposes on the large uneven box.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 100 build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*:*Copy*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|tests ran" "$O/tests.txt" | head -12
stage copies
timeout 120 build-gpu/bin/kernel_bench --copies --no-sweeps > "$O/copies.txt" 2>&1; echo "copies rc=$?"
grep -E "odd|ratio" "$O/copies.txt"
timeout 120 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "copy_triton rc=$?"; cat "$O/copy_triton.txt"
stage sweep_u8
timeout 120 build-gpu/bin/kernel_bench --transposes --uneven-sweeps --dtype u8 > "$O/sweep_u8.txt" 2>&1; echo "sweep rc=$?"
grep -E "x16383|5003|65536|\^2|scalar" "$O/sweep_u8.txt"
stage ncu
B="build-gpu/bin/kernel_bench --transposes --no-sweeps --dtype u8 --iters 1 --warmup 0"
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats"
timeout 90 ncu --clock-control none $S --kernel-name regex:axe_transpose --launch-skip 7 --launch-count 1 $B > "$O/ncu_ours_u8.txt" 2>&1; echo "ncu ours rc=$?"
timeout 90 ncu --clock-control none $S --kernel-name regex:transpose_kernel --launch-skip 2 --launch-count 1 python3 .gpu/triton_one.py u8 32 128 4 > "$O/ncu_triton_u8.txt" 2>&1; echo "ncu triton rc=$?"
grep -h -E "Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occ|Registers Per|Block Size|Grid Size|Issue Slots Busy|No Eligible|Executed Ipc|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Executed Instructions  " "$O"/ncu_*.txt | head -60
stage done
