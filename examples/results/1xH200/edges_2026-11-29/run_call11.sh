#!/bin/bash
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
M="mpirun --oversubscribe --allow-run-as-root --bind-to none"
for round in 1 2; do
  for v in old new; do
    B=.gpu/peer_bench_old; [ $v = new ] && B=build/examples/peer_bench
    echo "== $v round $round"
    timeout 60 $M -np 2 $B --sizes 256M --dtypes f32,bf16 --transitions S0-S1u,S1-Ru --iters 20 --rounds 2 2>&1 | grep -vE "^\s*$" | tail -8
  done
done 2>&1 | tee "$O/peer_bench.txt"
for t in "2 " "3 " "2 AXE_PEER_TRANSPORT=2 AXE_PEER_DIRECT=0"; do
  set -- $t; n=$1; shift
  env AXE_TIMEOUT_S=60 "$@" timeout 150 $M -n $n build/bin/axe_cuda_mpi_test > "$O/mpi_${n}_$#.txt" 2>&1; echo "mpi -n $n $* rc=$?"
  grep -E "^\[  (PASSED|FAILED)  \]|FAILED|SKIPPED" "$O/mpi_${n}_$#.txt" | sort | uniq -c | head -5
done
