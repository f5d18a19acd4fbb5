#!/bin/bash
# Prepared in the sixth session of 2026-11-28, run in the seventh as call 6 (call6_*, on 8a250c8;
# README.md): sheared accesses (sheared.patch in this folder: one element a lane, each warp access
# aligned to 32 elements, the rows' shifts absorbed by the shared-memory exchange, no shuffle;
# checked on the host emulator under AddressSanitizer and compiled to PTX, not run on a GPU).
# Applies the patch, runs the transpose GPU tests with sheared accesses forced, the uneven sweeps
# (rows "... sheared" beside "... scalar b-first" and the boxes' "sheared" rows) for u8, f16, f32
# and f64, and ncu of the u8 kernels on the large uneven box.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
git apply examples/results/1xH200/staged_2026-11-28/sheared.patch || exit 1
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 240 b/bin/axe_cuda_tests --gtest_filter='*TransformGenerated_Transpose*:*TransposeKernelsCompile*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|Failure" "$O/tests.txt" | head
stage transposes
for d in u8 f16 f32 f64; do
  [ $((SECONDS - T0)) -gt 420 ] && break
  timeout 100 b/bin/kernel_bench --transposes --uneven-sweeps --dtype $d > "/tmp/t_$d.txt" 2>&1; echo "$d rc=$?"
  cat "/tmp/t_$d.txt" >> "$O/transposes.txt"
  grep -E "^transpose .*(\+1( generated| sheared)|uneven generated .*(sheared|scalar b-first))" "/tmp/t_$d.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
stage ncu
B="b/bin/kernel_bench --transposes --no-sweeps --dtype u8 --iters 1 --warmup 0 --reps 1"
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables"
timeout 120 ncu --clock-control none $S --kernel-name regex:axe_transpose $B > "$O/ncu_u8.txt" 2>&1; echo "ncu rc=$?"
grep -E "^  axe_transpose|Duration|DRAM Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued" "$O/ncu_u8.txt" | awk '{$1=$1; print}' | paste -sd' ' | sed 's/axe_transpose/\naxe_transpose/g' | cut -c1-300
git apply -R examples/results/1xH200/staged_2026-11-28/sheared.patch
stage done
