#!/bin/bash
# 1 GPU: destination words in flat tiles (across rows' ends). Copy GPU tests, kernel_bench copies
# (no sweeps) and transposes (large uneven box added; sweeps), Triton's transposes right after,
# ncu metrics of the transposes.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target axe_cuda_tests kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
timeout 150 build-gpu/bin/axe_cuda_tests --gtest_filter='*Copy*:*Generated*:*Kernels*:*BoxList*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|tests ran" "$O/tests.txt" | head -12
stage copies
timeout 120 build-gpu/bin/kernel_bench --copies --no-sweeps > "$O/copies.txt" 2>&1; echo "copies rc=$?"
grep -E "odd|64 boxes|ratio" "$O/copies.txt" | grep -v "unit\|engines"
stage transposes
timeout 200 build-gpu/bin/kernel_bench --transposes > "$O/transposes.txt" 2>&1; echo "transposes rc=$?"
grep -E "x16383|5003|65536|\^2" "$O/transposes.txt" | grep -v " w[248]$" | grep -v "generated [0-9]"
grep -E "uneven generated" "$O/transposes.txt" | sort -t'%' -k1 | head -0
stage triton
timeout 150 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage ncu
timeout 120 ncu --clock-control none --csv --kernel-name regex:axe_transpose --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,smsp__cycles_active.avg build-gpu/bin/kernel_bench --transposes --no-sweeps --iters 1 --warmup 0 > "$O/ncu.csv" 2>&1; echo "ncu rc=$?"; wc -l "$O/ncu.csv"
stage done
