#!/bin/sh
# on_rank.sh RANK NAME=VALUE COMMAND...: runs COMMAND with NAME=VALUE added to its environment on
# rank RANK only (Open MPI's OMPI_COMM_WORLD_RANK, else torchrun's RANK), unchanged elsewhere. Chains:
#   mpirun -np 3 on_rank.sh 1 AXE_TIMEOUT_S=abc on_rank.sh 2 AXE_BACKEND=bogus ./fault start
rank=$1; assignment=$2; shift 2
if [ "${OMPI_COMM_WORLD_RANK:-${RANK:-}}" = "$rank" ]; then export "$assignment"; fi
exec "$@"
