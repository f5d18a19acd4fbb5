#!/bin/bash
# 1 GPU: f32 vectors default tile 128 x 64 (b x a): transposes' GPU tests, kernel_bench --transposes
# --no-sweeps and transpose_triton.py in the same call; ncu and SASS instruction mix of the u8
# aligned transpose (ours) against Triton's.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 100 build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|tests ran" "$O/tests.txt" | head -12
stage bench
timeout 120 build-gpu/bin/kernel_bench --transposes --no-sweeps > "$O/kernel_bench.txt" 2>&1; echo "bench rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/kernel_bench.txt"
stage triton
timeout 150 python3 examples/transpose_triton.py --json "$O/triton.json" > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage ncu_sass
mkdir -p /tmp/kc
AXE_KERNEL_CACHE_DIR=/tmp/kc timeout 90 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --kernel-name regex:axe_transpose --launch-count 1 build-gpu/bin/kernel_bench --transposes --no-sweeps --dtype u8 --iters 1 --warmup 0 > "$O/ncu_u8_square.txt" 2>&1; echo "ncu rc=$?"
grep -E "Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc|Executed Instructions  " "$O/ncu_u8_square.txt"
for f in /tmp/kc/*; do cuobjdump -sass "$f" > /tmp/s.txt 2>/dev/null || continue; n=$(grep -c "Function : axe_transpose" /tmp/s.txt); [ "$n" = 0 ] && continue
  echo "$(basename $f): $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' /tmp/s.txt) instr, PRMT $(grep -c PRMT /tmp/s.txt), LOP3 $(grep -c LOP3 /tmp/s.txt), SHF $(grep -c 'SHF\.' /tmp/s.txt), LDG $(grep -c LDG /tmp/s.txt), STG $(grep -c STG /tmp/s.txt), LDS $(grep -c 'LDS' /tmp/s.txt), STS $(grep -c 'STS' /tmp/s.txt)"; done
for f in $(find ~/.triton/cache -name "transpose_kernel.cubin" 2>/dev/null); do d=$(dirname $f); t=$(ls $d/*.ttir 2>/dev/null | head -1); [ -n "$t" ] || continue
  grep -q "xi8" "$t" || continue; cuobjdump -sass "$f" > /tmp/s.txt 2>/dev/null || continue
  echo "triton u8 $(grep -o 'tensor<[0-9]*x[0-9]*xi8' $t | head -1) div16=$(grep -c 'tt.divisibility = 16' $t) warps=$(grep -o '"num_warps": [0-9]*' $d/*.json | head -1): $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' /tmp/s.txt) instr, PRMT $(grep -c PRMT /tmp/s.txt), LDG $(grep -c LDG /tmp/s.txt), STG $(grep -c STG /tmp/s.txt), STS $(grep -c STS /tmp/s.txt), LDS $(grep -c LDS /tmp/s.txt)"; done | head -14
stage done
