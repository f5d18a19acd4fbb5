#!/bin/bash
# Ran in the eighth session as call 8 (README.md). Prepared in the seventh session of 2026-11-28 (the
# device time was spent then). Where the lean destination words (368df65) spend their time on the
# uneven u8 rows, and the runtime against Triton after them:
# 1. ncu with source counters on the u8 word kernels (kernel_bench --copies --dtype u8, 64 MiB,
#    one launch a row; launches 40-47 of axe_copy were the u8 word kernels in call 2 of this
#    folder: packs and unpacks 25 us, copies 40 us). sass_hot.py (this folder) keeps each
#    kernel's hottest instructions and the samples by opcode (the whole source page came back
#    too large in call 2; it is also kept gzipped).
# 2. kernel_bench --copies --no-sweeps for u8, bf16, f32, then examples/copy_triton.py, in one
#    process each, for a same-call runtime / Triton table of the uneven rows.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
D=examples/results/1xH200/words_2026-11-28
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=OFF -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage ncu
timeout 200 ncu --clock-control none --kernel-name regex:axe_copy --launch-skip 39 --launch-count 8 \
  --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats \
  --section InstructionStats --section SourceCounters -o /tmp/words_u8 \
  b/bin/kernel_bench --copies --no-sweeps --dtype u8 --mib 64 --iters 1 --warmup 0 --reps 1 > "$O/ncu_run.txt" 2>&1
echo "ncu rc=$?"
ncu -i /tmp/words_u8.ncu-rep --page details > "$O/ncu_details.txt" 2>&1
grep -E "^  axe_copy|Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issued Instructions  |DRAM Throughput" "$O/ncu_details.txt" | awk '{$1=$1; print}' | paste -sd' ' | sed 's/axe_copy/\naxe_copy/g' | cut -c1-260
ncu -i /tmp/words_u8.ncu-rep --page source --csv --print-source sass > /tmp/sass.csv 2>&1; echo "sass rc=$? $(wc -l < /tmp/sass.csv) lines"
gzip -c /tmp/sass.csv > "$O/sass.csv.gz"
python3 $D/sass_hot.py /tmp/sass.csv --top 40 > "$O/sass_hot.txt" 2>&1; head -60 "$O/sass_hot.txt"
stage copies
for d in u8 bf16 f32; do
  timeout 60 b/bin/kernel_bench --copies --no-sweeps --dtype $d > /tmp/k.txt 2>&1; echo "$d rc=$?"
  cat /tmp/k.txt >> "$O/copies.txt"
  grep -E "^(pack|unpack|copy) $d .*odd " /tmp/k.txt | awk '{print $1, $2, $(NF-3), $NF}'
done
timeout 90 python3 examples/copy_triton.py > "$O/copy_triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/copy_triton.txt"
stage done
