#!/bin/bash
# For a next call on one GPU (prepared in the ninth session, not run: the device time was spent).
# Why the runtime's 2-D destination-word tile runs the uneven u8 pack at 84% of memcpy where the
# experiment's hand-written kernel of the same tile runs at 90% (../README.md, calls 3-8): the
# generated kernel launched by harness.cu on the same rows, as generated and with one difference
# from the experiment's kernel edited in at a time, beside the experiment (../unpack_exp.cu) and
# kernel_bench's own rows, in one process each, one call; then the uneven copies beside Triton's.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
H=examples/results/1xH200/one_wave_2026-11-29/next_2d_gap
W=/tmp/gap; mkdir -p $W
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
g++ -std=c++20 -O1 -Iinclude $H/gen.cpp b/libaxe.a -o $W/gen || exit 1
nvcc -O3 -std=c++17 -arch=sm_90a -DPIECES -o $W/exp examples/results/1xH200/one_wave_2026-11-29/unpack_exp.cu &
$W/gen 1 512 4 8 > $W/k0.cu                       # the runtime's 2-D tile, as generated
sed 's/__launch_bounds__(256, 3)/__launch_bounds__(256)/' $W/k0.cu > $W/k1.cu       # no minimum of blocks
sed 's/if (wa >= 0 && wa + 32 <= L) {/if (true) {/' $W/k0.cu > $W/k2.cu           # source words whole always
sed 's/__restrict__//g' $W/k0.cu > $W/k3.cu                                      # no __restrict__
sed -E 's/if \(at\[([0-9]+)\] >= 0 \&\& at\[[0-9]+\] \+ 16 <= L\)/if (true)/' $W/k0.cu > $W/k4.cu  # stores whole (wrong row ends)
$W/gen 1 16384 1 8 flat > $W/k5.cu                # the flat tile (the runtime's default)
for v in 1 2 3 4; do cmp -s $W/k0.cu $W/k$v.cu && echo "variant $v: the edit did not apply"; done
c() { nvcc -O3 -std=c++17 -arch=sm_90a -DKERNEL="\"$W/$1.cu\"" $2 $H/harness.cu -o $W/$1_$3 & }
c k0 "-DTILE_A=512 -DTILE_B=32 -DWORDS=1" g3
c k0 "-DTILE_A=512 -DTILE_B=32 -DWORDS=1 -DGRID_PER_SM=6" g6
c k1 "-DTILE_A=512 -DTILE_B=32 -DWORDS=1" g3
c k2 "-DTILE_A=512 -DTILE_B=32 -DWORDS=1" g3
c k3 "-DTILE_A=512 -DTILE_B=32 -DWORDS=1" g3
c k4 "-DTILE_A=512 -DTILE_B=32 -DWORDS=1 -DNOCHECK" g3
c k5 "-DTILE_A=16384 -DTILE_B=1 -DWORDS=2" g3
wait
for round in 1 2; do
  $W/k0_g3 "2-D as generated" ; $W/k0_g6 "2-D, 6 blocks an SM"; $W/k1_g3 "2-D, launch_bounds(256)"
  $W/k2_g3 "2-D, source words whole"; $W/k3_g3 "2-D, no __restrict__"; $W/k4_g3 "2-D, stores whole (wrong)"
  $W/k5_g3 "flat as generated"
  $W/exp quick 0 | grep -E "reg 4"
done 2>&1 | tee "$O/gap.txt"
timeout 60 b/bin/kernel_bench --copies --uneven-sweeps --dtype u8 --rows "pack u8" > "$O/pack_u8.txt" 2>&1
grep -E "odd( generated)? |2-D|wide" "$O/pack_u8.txt" | awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'
# The runtime's uneven copies since this session (one wave for flat tiles, 32-bit 2-D words) beside
# Triton's masked row copy in the same call, for the README's Triton table.
for d in u8 bf16 f32; do
  timeout 40 b/bin/kernel_bench --copies --no-sweeps --dtype $d > "$O/copies_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E "^(pack|unpack|copy) $d .*odd( generated)? " "$O/copies_$d.txt" | awk '{print $1, $2, $(NF-3), $NF}' | paste -sd' '
done
timeout 90 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/copy_triton.txt"
