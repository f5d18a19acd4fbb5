#!/bin/bash
# Session 2026-11-28 (fourth), call 4, 1 x H200: the generated copies on whole waves of their
# resident blocks (.gpu/waves.patch) against HEAD (8 blocks an SM), two kernel_bench binaries
# alternated; the cap rows of the uneven copies; axe_cuda_tests and the multi-rank CUDA ctests on
# the patched build.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
git apply -R .gpu/waves.patch || exit 1
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target kernel_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_head
git apply .gpu/waves.patch || exit 1
cmake --build b -j"$(nproc)" >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/bin/kernel_bench /tmp/kb_waves
stage ab
for round in 1 2; do for v in head waves; do
  echo "## round $round $v" >> "$O/ab.txt"
  timeout 60 /tmp/kb_$v --copies --no-sweeps 2>/dev/null | grep -E "generated " >> "$O/ab.txt"
done; done
grep -E "^## |generated" "$O/ab.txt" | awk '{ if ($1 == "##") print; else { l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $(NF-3), $NF } }'
stage caps
for d in u8 bf16 f32; do
  timeout 90 /tmp/kb_waves --copies --uneven-sweeps --dtype $d 2>/dev/null | grep -E "odd generated( cap|) " >> "$O/caps.txt"
done
awk '{ l = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$/, "", l); print l, $NF }' "$O/caps.txt"
stage tests
timeout 150 b/bin/axe_cuda_tests > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST" "$O/cuda_tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \]' "$O/cuda_tests.txt")"
left=$((560 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left ctest --test-dir b -R "axe_cuda_(mpi|dist_tensor|peer|stream)|runtime_example|_cuda$" --output-on-failure > "$O/ctest.txt" 2>&1; echo "ctest rc=$? (limit $left s)"; grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$O/ctest.txt" | head -20
stage done
