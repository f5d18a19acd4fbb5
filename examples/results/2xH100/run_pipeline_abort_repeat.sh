#!/bin/bash
# 2 GPUs: TwoGpusPipeline.* repeated, looking for the intermittent "double free or corruption"
# abort; the tests now print a backtrace when they crash (resolved here with addr2line).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
nvidia-smi -L
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
echo "built at $((SECONDS - T0)) s"
fails=0; runs=0
while [ $((SECONDS - T0)) -lt ${BUDGET:-330} ]; do
  runs=$((runs+1)); g=$((runs % 2))
  AXE_CUDA_GRAPHS=$g timeout 120 build-gpu/bin/axe_cuda_tests --gtest_filter='TwoGpusPipeline*' > /tmp/t.txt 2>&1; rc=$?
  if [ $rc -ne 0 ]; then
    fails=$((fails+1)); cp /tmp/t.txt "$O/fail_$runs.txt"
    echo "run $runs graphs=$g rc=$rc"; grep -E "FAILED|double free|corruption|signal" /tmp/t.txt | head -5
    grep -o "axe_cuda_tests(+0x[0-9a-f]*)" /tmp/t.txt | sed 's/.*(+\(0x[0-9a-f]*\))/\1/' | xargs -r addr2line -f -C -e build-gpu/bin/axe_cuda_tests | paste - - | head -30
  fi
done
echo "$fails of $runs runs failed (at $((SECONDS - T0)) s)"
