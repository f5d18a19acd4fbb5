#!/bin/sh
# torchrun_like.sh N COMMAND...: starts N copies of COMMAND as `torchrun --nproc-per-node N` starts
# its workers on one node, without MPI: RANK = LOCAL_RANK = 0..N-1, WORLD_SIZE = LOCAL_WORLD_SIZE
# = N, MASTER_ADDR = 127.0.0.1, MASTER_PORT = $MASTER_PORT or a port P that was free a moment ago
# with P + 1 free too (axe's rendezvous takes MASTER_PORT + 1; a P + 1 that some other program
# held made the rendezvous fail with "Address already in use" under a parallel ctest). Open MPI's and PMI's variables are removed, so the
# runtime sees no MPI launcher. Waits for every copy; exits with the highest exit status.
n=$1; shift
port=${MASTER_PORT:-$(python3 -c '
import socket
for _ in range(100):
    a, b = socket.socket(), socket.socket()
    try:
        a.bind(("127.0.0.1", 0))
        p = a.getsockname()[1]
        if p < 65535:
            b.bind(("127.0.0.1", p + 1))
            print(p)
            break
    except OSError:
        pass
    finally:
        a.close()
        b.close()
')}
for v in $(env | sed -n 's/^\(OMPI_[A-Za-z0-9_]*\|PMIX_[A-Za-z0-9_]*\|PMI_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# Each copy's output goes through `sed -u`, which writes it a whole line at a time (the copies'
# unbuffered stderr would otherwise interleave mid-line).
dir=$(mktemp -d "${TMPDIR:-/tmp}/axe_torchrun_like.XXXXXX")
pids=""
r=0
while [ "$r" -lt "$n" ]; do
  ( RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" 2>&1
    echo $? > "$dir/rc.$r" ) | sed -u '' &
  pids="$pids $!"
  r=$((r + 1))
done
for p in $pids; do wait "$p"; done
worst=0
r=0
while [ "$r" -lt "$n" ]; do
  rc=$(cat "$dir/rc.$r" 2>/dev/null || echo 127)
  [ "$rc" -gt "$worst" ] && worst=$rc
  r=$((r + 1))
done
rm -rf "$dir"
exit "$worst"
