#!/bin/bash
# NEXT SESSION's first 1-GPU call (prepared 2026-11-28): (1) GPU tests of the transposes, packed
# registers included (never run on a GPU yet); (2) u8 and f16 sweeps with the "packed" rows;
# (3) the pending one-buffer launch (.gpu/pending/one_buffer_untested.patch) built beside main,
# both timed alternately on the same GPU, with Triton after. Compare times, not percentages.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
rm -rf /tmp/ob && mkdir -p /tmp/ob && tar --exclude=./build-gpu --exclude=./build -cf - . | tar -C /tmp/ob -xf - && (cd /tmp/ob && patch -p1 -s < .gpu/pending/one_buffer_untested.patch) || { echo "patch failed"; exit 1; }
(cmake -S /tmp/ob -B /tmp/ob/build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF && cmake --build /tmp/ob/build-gpu -j"$(nproc)" --target kernel_bench axe_cuda_tests) > /tmp/build_one_buffer.log 2>&1 || { echo "one-buffer build failed"; tail -20 /tmp/build_one_buffer.log; }
stage tests
timeout 120 build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|Failure" "$O/tests.txt" | head -12
timeout 120 /tmp/ob/build-gpu/bin/axe_cuda_tests --gtest_filter='*Transform*:*Transpose*' > "$O/tests_one_buffer.txt" 2>&1; echo "tests one-buffer rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED|Failure" "$O/tests_one_buffer.txt" | head -12
stage sweeps
for d in u8 f16; do
  timeout 120 build-gpu/bin/kernel_bench --transposes --dtype $d > "$O/sweep_$d.txt" 2>&1; echo "sweep $d rc=$?"
  for k in "$d generated [0-9]" "$d wide generated"; do echo "-- $k"; grep "transpose $k" "$O/sweep_$d.txt" | awk '{print $NF" "$0}' | sort -rn | head -6 | cut -d' ' -f2-; done
done
stage main_vs_one_buffer
for round in 1 2; do
  echo "-- round $round" >> "$O/bench_main.txt"; timeout 90 build-gpu/bin/kernel_bench --transposes --no-sweeps > /tmp/m$round.txt 2>&1; cat /tmp/m$round.txt >> "$O/bench_main.txt"
  echo "-- round $round" >> "$O/bench_one_buffer.txt"; timeout 90 /tmp/ob/build-gpu/bin/kernel_bench --transposes --no-sweeps > /tmp/o$round.txt 2>&1; cat /tmp/o$round.txt >> "$O/bench_one_buffer.txt"
done
echo "box ms: main round 1, main round 2, one buffer round 1, one buffer round 2"
paste <(grep -E "^transpose .*(\^2|65536|\+1) " /tmp/m1.txt | awk '{print $2, $3, $5}') <(grep -E "^transpose .*(\^2|65536|\+1) " /tmp/m2.txt | awk '{print $5}') <(grep -E "^transpose .*(\^2|65536|\+1) " /tmp/o1.txt | awk '{print $5}') <(grep -E "^transpose .*(\^2|65536|\+1) " /tmp/o2.txt | awk '{print $5}')
stage triton
timeout 150 python3 examples/transpose_triton.py > "$O/triton.txt" 2>&1; echo "triton rc=$?"; cat "$O/triton.txt"
stage done
