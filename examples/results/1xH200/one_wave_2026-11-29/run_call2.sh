#!/bin/bash
# Call 2: 2-D against flat, registers against cp.async, and the unpack's row ends (partial sectors).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p "$O"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/unpack_exp .gpu/unpack_exp.cu 2>&1 | tail -3
timeout 200 /tmp/unpack_exp all > "$O/exp_all.txt" 2>&1; echo "exp rc=$?"; cat "$O/exp_all.txt"
# DRAM bytes with the caches kept between launches (one launch in steady state each)
for ci in 1 2 3 4; do
  for k in 6k_reg2I 5k_regI; do
    timeout 60 ncu --clock-control none --cache-control none --kernel-name-base mangled -k regex:"${k}" --launch-skip 20 --launch-count 1 --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum \
      /tmp/unpack_exp quick $ci > "$O/ncu_${ci}_$k.csv" 2>&1
    echo "case $ci $k rc=$?"; grep -E '"(gpu__time|dram__|lts__)' "$O/ncu_${ci}_$k.csv" | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'
  done
done
