#!/bin/bash
# Call 6: ncu of the runtime's u8 pack kernels (flat default, 2-D on two waves and one) beside the
# experiment's 2-D kernel, caches kept between launches.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
nvcc -O3 -std=c++17 -arch=sm_90a -DPIECES -lineinfo -o /tmp/unpack_exp .gpu/unpack_exp.cu 2>&1 | tail -3
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage bench
timeout 60 b/bin/kernel_bench --copies --uneven-sweeps --dtype u8 --rows "pack u8" > "$O/pack_u8.txt" 2>&1; echo "rc=$?"
grep -E "^pack u8" "$O/pack_u8.txt" | grep -vE "unit|engines|w4|flat 2048|flat 512" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section InstructionStats --section SourceCounters"
M="--metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,smsp__inst_executed.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
for skip in 10 40 43; do
  timeout 120 ncu --clock-control none --cache-control none -k regex:axe_copy --launch-skip $skip --launch-count 1 $S $M \
    b/bin/kernel_bench --copies --uneven-sweeps --dtype u8 --rows "pack u8" --iters 2 --warmup 1 --reps 1 > "$O/ncu_runtime_$skip.txt" 2>&1
  echo "skip $skip rc=$?"
done
timeout 120 ncu --clock-control none --cache-control none --kernel-name-base mangled -k regex:6k_reg2I --launch-skip 20 --launch-count 1 $S $M \
  /tmp/unpack_exp quick 0 > "$O/ncu_exp_2d.txt" 2>&1; echo "exp rc=$?"
for f in "$O"/ncu_*.txt; do
  echo "-- $f"
  grep -E "^  [a-zA-Z_0-9<>]+ \(|Duration|DRAM Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  |dram__bytes|lts__t_sectors|smsp__inst_executed|l1tex__t_requests|Issue Slots Busy|No Eligible" "$f" | awk '{$1=$1; print}' | head -30
done
stage done
