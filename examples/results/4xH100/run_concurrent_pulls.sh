#!/bin/bash
# 4 GPUs: concurrent pulls from several senders on the peer transport: the peer tests on 4 and 3
# ranks, calibration (peer GB/s), redistribute_bench with the peer transport forced against NCCL.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stage() { echo "== $1 at $((SECONDS - T0)) s"; }
cmake -S . -B b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a -DAXE_BUILD_TESTS=ON -DAXE_BUILD_PYTHON=OFF > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
cmake --build b -j"$(nproc)" --target axe_cuda_mpi_test calibrate_bench redistribute_bench >> "$O/build.log" 2>&1 || { grep -B3 -A15 'error' "$O/build.log" | head -60; exit 1; }
stage tests
MPI="mpirun --oversubscribe --allow-run-as-root --bind-to none"
T="$O/tests.txt"; : > "$T"
for n in 4 3; do AXE_PEER_TRANSPORT=2 AXE_TIMEOUT_S=30 timeout 60 $MPI -np $n b/bin/axe_cuda_mpi_test >> "$T" 2>&1; echo "peer $n rc=$?" | tee -a "$T"; done
AXE_TIMEOUT_S=30 timeout 60 $MPI -np 4 b/bin/axe_cuda_mpi_test mixed >> "$T" 2>&1; echo "mixed 4 rc=$?" | tee -a "$T"
stage bench
AXE_CALIBRATE=/tmp/model.txt timeout 60 $MPI -np 4 b/examples/calibrate_bench --quick > "$O/calibrate.txt" 2>&1; echo "calibrate rc=$?"
B="$O/bench.txt"; : > "$B"
for E in AXE_PEER_TRANSPORT=0 AXE_PEER_TRANSPORT=2; do
  echo "## $E" >> "$B"; env $E timeout 50 $MPI -np 4 b/examples/redistribute_bench --sizes 256M --dtypes f32 --iters 20 >> "$B" 2>&1; echo "$E rc=$?"
done
stage done
