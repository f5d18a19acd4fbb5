#!/bin/bash
# (As run: .gpu/graph_memcpy.cu is graph_memcpy.cu here, .gpu/graph_runs.patch capture_time_policy_rejected.patch.)
# Call 4, 2 x H200: a device-to-device cudaMemcpyAsync in a CUDA graph against launched directly,
# aligned and not (.gpu/graph_memcpy.cu); then S0->R uneven with HEAD against the patch that keeps
# runs not 16-byte aligned off the copy engines while a graph is captured (.gpu/graph_runs.patch),
# alternated twice, with the copy engines off as a third column.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
nvcc -O2 -arch=sm_90a -o /tmp/gm .gpu/graph_memcpy.cu && /tmp/gm | tee "$O/graph_memcpy.txt"
stage build
git apply -R .gpu/graph_runs.patch || exit 1
cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target reshard_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/examples/reshard_bench /tmp/rb_head
git apply .gpu/graph_runs.patch || exit 1
cmake --build b -j"$(nproc)" --target reshard_bench axe_cuda_tests >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
cp b/examples/reshard_bench /tmp/rb_patch
stage ab
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
R="$O/ab.txt"; : > "$R"
for round in 1 2; do for v in head patch head-ce-off; do
  echo "## round $round $v" >> "$R"
  if [ $v = head-ce-off ]; then E="env AXE_COPY_ENGINE_MIN=0"; b=head; else E=env; b=$v; fi
  timeout 50 $E $MPI -np 2 /tmp/rb_$b --transitions S0-R,U-S0-R,U-S0-S1,S1-R --sizes 16M,256M,1G --dtypes f32,bf16 --iters 20 >> "$R" 2>&1
  echo "rc=$?" >> "$R"
done; done
grep -E "^## |^(S|R|P|U)" "$R" | awk '{print $1, $2, $3, $4, $5, $6}'
stage tests
left=$((570 - (SECONDS - T0))); [ $left -lt 30 ] && left=30
timeout $left b/bin/axe_cuda_tests --gtest_filter='*Copy*:*Engine*:*Graph*:*Transition*:*Redistribute*' > "$O/cuda_tests.txt" 2>&1; echo "axe_cuda_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) \]|FAILED TEST|tests ran" "$O/cuda_tests.txt" | head; echo "skipped: $(grep -c '^\[  SKIPPED \]' "$O/cuda_tests.txt")"
stage done
