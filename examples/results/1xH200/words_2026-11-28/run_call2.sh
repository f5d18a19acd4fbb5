#!/bin/bash
# Seventh session of 2026-11-28, call 2 on one H200 (call 1 ran staged_2026-11-28/run_next_sheared.sh): where the uneven u8 rows' destination-word
# copy spends its time, and whether global-space accesses help it.
# 1. ncu of the u8 pack / unpack / copy kernels (kernel_bench --copies --dtype u8, 64 MiB, one launch
#    each): warp states, instruction mix and the SASS with its stall samples (source page).
# 2. global.patch (this folder): the destination words' whole loads through __ldg (ld.global.nc)
#    and their stores through __stwb (st.global), row-end pieces too, instead of generic ld / st
#    (the words' addresses are integers). Two kernel_bench binaries (HEAD, HEAD + patch) alternated
#    twice on the uneven u8 / bf16 / f32 rows (--copies --no-sweeps --dtype T).
# 3. peer_bench, 2 ranks on the GPU, S1-R only (f32, bf16, 256M), the generated copies off and on
#    alternated three times: the S1-R f32 direct-read row that ran 0.853 ms on against 0.606 off
#    (row_ends_2026-11-28, call 2) alone.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
P=examples/results/1xH200/words_2026-11-28/global.patch
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench peer_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_head
git apply $P || exit 1
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_global
git apply -R $P
cmake --build b -j"$(nproc)" --target peer_bench >> "$O/build.log" 2>&1
stage ncu
timeout 150 ncu --clock-control none --kernel-name regex:axe_copy --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section InstructionStats --section SourceCounters --section MemoryWorkloadAnalysis -o "$O/copies_u8" /tmp/kb_head --copies --no-sweeps --dtype u8 --mib 64 --iters 1 --warmup 0 --reps 1 > "$O/ncu_run.txt" 2>&1; echo "ncu rc=$?"
grep -E "^(pack|unpack|copy) " "$O/ncu_run.txt" | head -30
ncu -i "$O/copies_u8.ncu-rep" --page details > "$O/ncu_details.txt" 2>&1
ncu -i "$O/copies_u8.ncu-rep" --page source --csv --print-source sass > "$O/ncu_sass.csv" 2>&1; echo "sass rc=$? $(wc -l < "$O/ncu_sass.csv") lines"
grep -E "^  axe_copy|Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Ipc A|DRAM Throughput" "$O/ncu_details.txt" | awk '{$1=$1; print}' | paste -sd' ' | sed 's/axe_copy/\naxe_copy/g' | cut -c1-260
stage ab
export AXE_KERNEL_CACHE_DIR=/tmp/axe_kc
for round in 1 2; do for v in head global; do for d in u8 bf16 f32; do
  [ $((SECONDS - T0)) -gt 430 ] && break 3
  echo "## round $round $v $d" >> "$O/ab.txt"
  timeout 60 /tmp/kb_$v --copies --no-sweeps --dtype $d > /tmp/ab.txt 2>&1; echo "rc=$?" >> /tmp/ab.txt
  cat /tmp/ab.txt >> "$O/ab.txt"
  grep -E "^(pack|unpack|copy) $d .*(odd|odd generated) " /tmp/ab.txt | sed "s/^/$round $v /" | awk '{print $1, $2, $3, $4, $(NF-3), $NF}'
done; done; done
stage peer
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
for round in 1 2 3; do for g in off on; do
  [ $((SECONDS - T0)) -gt 540 ] && break 2
  if [ $g = off ]; then E="env AXE_GENERATED_COPY_MIN_RUN=0 AXE_REALIGN_MIN_ROW=0"; else E=env; fi
  echo "## round $round generated $g" >> "$O/peer.txt"
  timeout 40 $E $MPI -np 2 b/examples/peer_bench --sizes 256M --dtypes f32,bf16 --transitions S1-R >> "$O/peer.txt" 2>&1; echo "rc=$?" >> "$O/peer.txt"
done; done
grep -E "^## |^S1-R" "$O/peer.txt" | awk '{print $1, $2, $3, $4, $5, $6}' | paste -sd' ' | sed 's/## /\n/g'
stage done
