#!/bin/bash
# 1 GPU: realigned4 (4-byte words for 1- and 2-byte elements): GPU tests, u8 and f16 sweeps on the
# large uneven box, Triton's transposes in the same call, ncu of realigned4 u8.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 100 build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|tests ran|Failure|Which is" "$O/tests.txt" | head -12
stage sweeps
for d in u8 f16; do
timeout 150 build-gpu/bin/kernel_bench --transposes --uneven-sweeps --dtype $d > "$O/sweep_$d.txt" 2>&1; echo "sweep $d rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/sweep_$d.txt" | grep -v "uneven generated"
grep "uneven generated" "$O/sweep_$d.txt" | awk '{print $NF" "$0}' | sort -rn | head -8 | cut -d' ' -f2-
grep "realigned4" "$O/sweep_$d.txt" | grep "uneven generated"
done
stage triton
timeout 150 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; grep -E "5003|16383|65536|16384x|8192x" "$O/triton.txt"
stage ncu
B="build-gpu/bin/kernel_bench --transposes --no-sweeps --dtype u8 --iters 1 --warmup 0"
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
timeout 90 ncu --clock-control none $S --kernel-name regex:axe_transpose --launch-skip 11 --launch-count 1 $B > "$O/ncu_r4_u8.txt" 2>&1; echo "ncu rc=$?"
grep -h -E "axe_transpose|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Achieved Occupancy|Registers Per|Compute \(SM\)" "$O"/ncu_*.txt | head -20
stage done
