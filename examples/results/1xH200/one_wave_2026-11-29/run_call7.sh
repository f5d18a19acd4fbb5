#!/bin/bash
# Call 7: 32-bit row arithmetic for the 2-D destination words (wide rows beside), flat on one wave:
# the uneven sweeps, the copy GPU tests, the multi-rank CUDA ctests on the one GPU.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage bench
f() { awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF }'; }
for d in u8 bf16 f32; do
  timeout 80 b/bin/kernel_bench --copies --uneven-sweeps --dtype $d > "$O/copies_sweeps_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E "^(pack|unpack|copy) $d .*odd" "$O/copies_sweeps_$d.txt" | grep -E "odd( generated)?$|odd( generated)? [0-9]|wide|2-D|cap 3" | f
done
for d in u8 bf16 f32; do
  timeout 40 b/bin/kernel_bench --copies --no-sweeps --dtype $d > "$O/copies_$d.txt" 2>&1; echo "$d rc=$?"
  grep -E "^(pack|unpack|copy) $d .*odd( generated)? " "$O/copies_$d.txt" | awk '{print $1, $2, $(NF-3), $NF}' | paste -sd' '
done
stage tests
timeout 150 b/bin/axe_cuda_tests --gtest_filter='*Copy*:*copy*:LaunchGrid*' > "$O/tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[==========\]|^\[  (PASSED|FAILED)  \]|FAILED TEST|Failure" "$O/tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \] .* (' "$O/tests.txt")"
stage ctest
left=$((570 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|peer|stream)|runtime_example|_cuda$" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$? (limit $left s)"; grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$O/ctest.txt" | head -20
stage done
