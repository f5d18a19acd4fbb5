#!/bin/bash
# 1 GPU: why the large uneven transposes trail Triton: kernel_bench --transposes (realigned and
# scalar sweeps on R x 16383 +1), ncu --set full on ours (f16 realigned and scalar, u8 scalar)
# and on Triton's (f16, u8 at 128x32 w4).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage ncu_ours
B="build-gpu/bin/kernel_bench --transposes --no-sweeps --iters 1 --warmup 0"
timeout 100 ncu --clock-control none --set full --kernel-name regex:axe_transpose --launch-skip 22 --launch-count 2 $B > "$O/ncu_f16.txt" 2>&1; echo "ncu f16 rc=$?"
timeout 60 ncu --clock-control none --set full --kernel-name regex:axe_transpose --launch-skip 39 --launch-count 1 $B > "$O/ncu_u8.txt" 2>&1; echo "ncu u8 rc=$?"
stage ncu_triton
timeout 60 ncu --clock-control none --set full --kernel-name regex:transpose_kernel --launch-skip 2 --launch-count 1 python3 .gpu/triton_one.py f16 128 32 4 > "$O/ncu_triton_f16.txt" 2>&1; echo "triton f16 rc=$?"
timeout 60 ncu --clock-control none --set full --kernel-name regex:transpose_kernel --launch-skip 2 --launch-count 1 python3 .gpu/triton_one.py u8 128 32 4 > "$O/ncu_triton_u8.txt" 2>&1; echo "triton u8 rc=$?"
grep -h -E "Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Stall|Memory Throughput" "$O"/ncu_*.txt | head -60
stage sweep
timeout 200 build-gpu/bin/kernel_bench --transposes > "$O/transposes.txt" 2>&1; echo "transposes rc=$?"
grep -E "x16383" "$O/transposes.txt"
for d in f32 f16 f64 u8; do grep "transpose $d uneven generated" "$O/transposes.txt" | sort -t% -k1 | awk '{print $(NF)" "$0}' | sort -rn | head -4 | cut -d' ' -f2-; done
stage done
