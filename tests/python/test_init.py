"""axe.init() in fresh processes (singleton MPI, no launcher): bad settings raise one clear
axe.Error; torchrun-style ranks meet over axe's TCP rendezvous; layouts work without init;
finalize is idempotent."""
import os
import subprocess
import sys

import pytest

import axe

pytestmark = pytest.mark.skipif(not axe.HAVE_RUNTIME, reason="built without the runtime (no MPI)")


def run(code, **env):
    e = dict(os.environ)
    for k in ("OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMIX_RANK", "WORLD_SIZE"):
        e.pop(k, None)
    e.update(env)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=e)
    return p.returncode, p.stdout + p.stderr


def test_bad_setting_is_an_axe_error():
    rc, out = run("import axe\ntry:\n    axe.init()\nexcept axe.Error as e:\n    print('ERR', e)\n"
                  "print(axe.is_initialized())", AXE_TIMEOUT_S="abc")
    assert rc == 0 and "ERR axe start-up failed on 1 of 1 ranks: rank 0: AXE_TIMEOUT_S='abc'" in out and "False" in out


def free_port():
    # A port P that was free a moment ago with P + 1 free too: axe's rendezvous listens on
    # MASTER_PORT + 1 (as tests/runtime/torchrun_like.sh picks it). With P alone, P + 1 was once
    # taken by another test running beside this one in CI ("Address already in use").
    import socket
    for _ in range(100):
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            p = a.getsockname()[1]
            if p >= 65535:
                continue
            try:
                b.bind(("127.0.0.1", p + 1))
            except OSError:
                continue
            return p
    raise RuntimeError("no two adjacent free ports")


def test_torchrun_without_mpi_rendezvous_and_host_backend_error():
    # Two ranks as torchrun starts them: they meet over axe's TCP rendezvous and agree on one
    # error, since the host backend (no torch here) moves its data over MPI.
    code = "import axe\ntry:\n    axe.init()\nexcept axe.Error as e:\n    print('ERR', e)"
    port = str(free_port())
    e = dict(os.environ)
    for k in ("OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMIX_RANK", "PMI_SIZE", "AXE_BACKEND"):
        e.pop(k, None)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=dict(e, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
                                                  MASTER_ADDR="127.0.0.1", MASTER_PORT=port, AXE_TIMEOUT_S="30"))
             for r in range(2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    for out in outs:
        assert "ERR axe start-up failed on 2 of 2 ranks: ranks 0,1: the host backend moves its data over MPI" in out, out


def test_world_size_without_master_addr_says_so():
    rc, out = run("import axe\ntry:\n    axe.init()\nexcept axe.Error as e:\n    print('ERR', e)", WORLD_SIZE="4", RANK="0")
    assert rc == 0 and "ERR WORLD_SIZE=4 without an MPI launcher, but MASTER_ADDR is not set" in out, out


def test_single_process_and_finalize():
    code = ("import numpy as np, axe\naxe.init(backend='host')\naxe.init()\n"
            "t = axe.distribute(np.arange(6.0), axe.Mesh(gpu=1), 'S(0)')\nl = t.local\n"
            "print(axe.rank(), axe.world_size(), axe.backend(), t.redistribute('R').full_tensor().tolist())\n"
            "axe.finalize()\naxe.finalize()\nprint(l.tolist())\n"
            "try:\n    t.full_tensor()\nexcept axe.Error as e:\n    print('ERR', e)\n"
            "try:\n    axe.init()\nexcept axe.Error as e:\n    print('ERR2', e)\n")
    rc, out = run(code)
    assert rc == 0, out
    assert "0 1 host [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]" in out
    assert "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]" in out.splitlines()[1]
    assert "ERR this tensor belongs to a runtime that axe.finalize() ended" in out
    assert "ERR2 axe.init: MPI was finalized" in out
