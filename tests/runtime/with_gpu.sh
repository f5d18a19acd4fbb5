#!/bin/sh
# with_gpu.sh COMMAND...: runs COMMAND when a GPU is visible (nvidia-smi lists one); otherwise
# prints why and exits 77, CTest's SKIP_RETURN_CODE for the CUDA variants of the fault tests.
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "skipped: no GPU visible"
  exit 77
fi
exec "$@"
