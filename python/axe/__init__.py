"""axe: shard tensors over devices and reshard them with Axe layouts.

Layouts (no MPI needed)::

    >>> import axe
    >>> l = axe.Layout("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp")
    >>> [str(p) for p in l.forward((2, 9), shape=(8, 16))]      # doctest: +SKIP
    >>> print(axe.plan((64, 128), axe.Mesh(dp=2, tp=2), "S(0),S(1)", "S(1),S(0)"))
    >>> print(axe.linear.convert_plan("mma:2,2", "blocked:1,4/8,4/4,1/1,0", (32, 32)))

Distributed tensors, one process per rank under ``mpirun`` (``launch/axe-run``)::

    axe.init()
    mesh = axe.Mesh(dp=2, tp=2)
    t = axe.distribute(x, mesh, [axe.Shard(0), axe.Replicate()])   # or "S(0),R", or an axe.Layout
    t.local                      # this rank's shard, a numpy array over axe's buffer (no copy)
    r = t.redistribute("R,S(0)")
    y = r.full_tensor()          # the global tensor on every rank
    axe.visualize(r)
    axe.finalize()
"""
import atexit as _atexit
import os as _os
import sys as _sys

# Open MPI loads its components with dlopen and expects libmpi's symbols to be global (as mpi4py
# arranges): load the extension, and with it libmpi, RTLD_GLOBAL.
_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_flags | _os.RTLD_GLOBAL)
try:
    from . import _axe
finally:
    _sys.setdlopenflags(_flags)

from ._axe import (  # noqa: E402  (re-exported C++ values and functions)
    Error, ParseError, Layout, Placement, Mesh, AxisPlacement, DistLayout, Plan, RankPlan, Step,
    Simulation, Shard, Replicate, Partial, parse_placements, shard, plan, simulate, canonicalize,
    equivalent, storage, group, tile, tile_of, slice, direct_sum, project, check_valid, is_valid,
    cute, linear, HAVE_RUNTIME,
)
from ._dist import (  # noqa: E402
    DistTensor, init, finalize, is_initialized, rank, world_size, local_rank, backend, barrier,
    empty_cache, distribute, from_local, visualize, DTYPES, init_device_mesh, distribute_tensor,
    visualize_sharding,
)

# `import axe.linear` and `from axe.linear import LinearLayout` find the extension's submodule.
_sys.modules[__name__ + ".linear"] = linear

__version__ = "0.1.0"
__all__ = [
    "Error", "ParseError", "Layout", "Placement", "Mesh", "AxisPlacement", "DistLayout", "Plan",
    "RankPlan", "Step", "Simulation", "Shard", "Replicate", "Partial", "parse_placements", "shard",
    "plan", "simulate", "canonicalize", "equivalent", "storage", "group", "tile", "tile_of", "slice",
    "direct_sum", "project", "check_valid", "is_valid", "cute", "linear", "DistTensor", "init", "finalize",
    "is_initialized", "rank", "world_size", "local_rank", "backend", "barrier", "empty_cache",
    "distribute", "from_local", "visualize", "DTYPES", "init_device_mesh", "distribute_tensor",
    "visualize_sharding",
]
_atexit.register(finalize)
