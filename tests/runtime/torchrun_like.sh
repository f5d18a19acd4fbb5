#!/bin/sh
# torchrun_like.sh N COMMAND...: starts N copies of COMMAND as `torchrun --nproc-per-node N` starts
# its workers on one node, without MPI: RANK = LOCAL_RANK = 0..N-1, WORLD_SIZE = LOCAL_WORLD_SIZE
# = N, MASTER_ADDR = 127.0.0.1, MASTER_PORT = $MASTER_PORT or a port that was free a moment ago
# (axe's rendezvous takes MASTER_PORT + 1). Open MPI's and PMI's variables are removed, so the
# runtime sees no MPI launcher. Waits for every copy; exits with the highest exit status.
n=$1; shift
port=${MASTER_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
for v in $(env | sed -n 's/^\(OMPI_[A-Za-z0-9_]*\|PMIX_[A-Za-z0-9_]*\|PMI_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
pids=""
r=0
while [ "$r" -lt "$n" ]; do
  RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" &
  pids="$pids $!"
  r=$((r + 1))
done
worst=0
for p in $pids; do
  wait "$p"; rc=$?
  [ "$rc" -gt "$worst" ] && worst=$rc
done
exit "$worst"
