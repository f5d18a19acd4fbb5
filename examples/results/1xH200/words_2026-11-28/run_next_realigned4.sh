#!/bin/bash
# Ran in the eighth session as call 7 (README.md). Prepared in the seventh session of 2026-11-28
# (the device time was spent then). realigned4.patch (this folder): realigned transposes on 4-byte words
# (TransposeTile::vector_bytes = 4 with TransposeAccess::realigned), for the uneven u8 and f16
# transposes that one element per access leaves at 57% and 75% of memcpy. A warp access then
# moves 128 bytes (4-5 sectors) instead of 32 bytes over two sectors (the L2 bound that ncu found
# on the one-element kernel), at one 4-byte load a vector (and the next word's, an L1 hit), one
# funnel shift, and one shuffle on the store. Checked on the host emulator (u8, f16, f32: the
# default tile's extents capped at 128 elements, and 32 x 32 w2; a mutation of the load's shift
# caught); ptxas 56-64 registers for the u8 and f16 tiles tried, no spill (the 16-byte realigned
# u8 kernel: 99). Not run on a GPU.
# Applies the patch; the transpose GPU tests (TransformGenerated_TransposeMatchesHost now also
# takes a 64 x 64 tile of 4-byte words, realigned forced); the uneven sweeps for u8 and f16 (rows
# "... v4" beside "... scalar b-first", and "+1 realigned v4"); ncu of the u8 kernels on the large
# uneven box; then takes the patch off.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
P=examples/results/1xH200/words_2026-11-28/realigned4.patch
git apply $P || exit 1
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 240 b/bin/axe_cuda_tests --gtest_filter='*Transform*Transpose*:*TransposeKernelsCompile*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|Failure" "$O/tests.txt" | head
stage transposes
for d in u8 f16; do
  timeout 120 b/bin/kernel_bench --transposes --uneven-sweeps --dtype $d > "/tmp/t_$d.txt" 2>&1; echo "$d rc=$?"
  cat "/tmp/t_$d.txt" >> "$O/transposes.txt"
  grep -E "^transpose .*(\+1( generated| realigned)|uneven generated .*(v4|scalar b-first))" "/tmp/t_$d.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
done
stage ncu
timeout 120 ncu --clock-control none --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis_Tables --kernel-name regex:axe_transpose b/bin/kernel_bench --transposes --no-sweeps --dtype u8 --iters 1 --warmup 0 --reps 1 > "$O/ncu_u8.txt" 2>&1; echo "ncu rc=$?"
grep -E "^  axe_transpose|Duration|DRAM Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued" "$O/ncu_u8.txt" | awk '{$1=$1; print}' | paste -sd' ' | sed 's/axe_transpose/\naxe_transpose/g' | cut -c1-300
git apply -R $P
stage done
