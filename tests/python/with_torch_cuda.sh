#!/bin/sh
# with_torch_cuda.sh PYTHON LAUNCHER...: runs `LAUNCHER... PY -m pytest ... test_torch_cuda.py` in
# tests/python, PY being $AXE_TORCH_PYTHON when set (an interpreter with torch, e.g.
# /opt/torch/.venv/bin/python3), else PYTHON (the build's). Prints why and exits 77 (CTest's
# SKIP_RETURN_CODE) when PY has no torch, torch sees no CUDA GPU, or the build's axe has no cuda
# backend; fails when PY cannot import the build's axe at all (the extension is built for one
# Python version: configure with -DPython_EXECUTABLE=PY).
py=${AXE_TORCH_PYTHON:-$1}
shift
cd "$(dirname "$0")" || exit 1
if ! "$py" -c "import torch" >/dev/null 2>&1; then
  echo "skipped: no torch in $py (AXE_TORCH_PYTHON names an interpreter with torch)"
  exit 77
fi
if ! "$py" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then
  echo "skipped: torch in $py sees no CUDA GPU"
  exit 77
fi
if ! out=$("$py" -c "import torch, axe" 2>&1); then
  echo "$py cannot import the build's axe (PYTHONPATH=$PYTHONPATH): $out"
  echo "the extension is built for one Python version: configure the build with -DPython_EXECUTABLE=$py"
  exit 1
fi
if ! "$py" -c "import sys, axe; sys.exit(0 if axe._axe.HAVE_RUNTIME and 'cuda' in axe._axe._backends() else 1)"; then
  echo "skipped: this build of axe has no cuda backend"
  exit 77
fi
exec "$@" "$py" -m pytest -q -rs --color=no -p no:cacheprovider test_torch_cuda.py
