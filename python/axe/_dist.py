"""Distributed tensors (axe::DistTensor) for numpy arrays and torch tensors.

Every call that takes or returns a DistTensor is collective over the ranks of the runtime, as in
C++: every rank calls it with the same arguments, or every rank gets the same axe.Error.

dtypes: float32 f32, float16 f16, float64 f64, int32 i32, int64 i64, uint8 u8 map to numpy and
torch alike. bfloat16 (bf16): torch.bfloat16 and ml_dtypes.bfloat16 arrays are taken as bf16;
numpy has no bf16, so a plain numpy uint16 array of bf16 bits is passed with dtype="bf16", and bf16
results come back as ml_dtypes.bfloat16 when ml_dtypes is importable, else as uint16 bits.
Any other dtype is an axe.Error naming it.
"""
import os
import sys

import numpy as np

from . import _axe
from ._axe import Error

DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32,
          "i64": np.int64, "u8": np.uint8, "bf16": None}

try:  # optional: numpy's bfloat16 from ml_dtypes
    import ml_dtypes as _ml_dtypes

    DTYPES["bf16"] = _ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None


def _require_runtime():
    if not _axe.HAVE_RUNTIME:
        raise Error("axe was built without its distributed runtime (MPI was not found at build time)")


def init(backend=None, timeout_s=None):
    """Starts axe's runtime on this rank: MPI (from mpirun's environment) and the backend, every
    rank agreeing on the settings. Collective. Idempotent while running. The backend: `backend`,
    else AXE_BACKEND, else `cuda` when torch is imported with CUDA available and this build has
    the cuda backend (torch CUDA tensors), else `host` (numpy arrays, CPU tensors)."""
    _require_runtime()
    if _axe.is_initialized():
        return
    if not backend and not os.environ.get("AXE_BACKEND"):
        torch = sys.modules.get("torch")
        cuda = torch is not None and torch.cuda.is_available() and "cuda" in _axe._backends()
        backend = "cuda" if cuda else "host"
    _axe._init(backend or "", float(timeout_s or 0))


def finalize():
    """Ends the runtime (MPI_Finalize when axe started MPI). Tensors of the ended runtime raise
    axe.Error afterwards; their local arrays stay valid. Called at exit when still running."""
    if _axe.HAVE_RUNTIME:
        _axe._finalize()


def is_initialized():
    return _axe.HAVE_RUNTIME and _axe.is_initialized()


def rank():
    _require_runtime()
    return _axe.rank()


def world_size():
    _require_runtime()
    return _axe.world_size()


def local_rank():
    _require_runtime()
    return _axe.local_rank()


def backend():
    _require_runtime()
    return _axe.backend()


def barrier():
    _require_runtime()
    _axe.barrier()


def empty_cache():
    """Gives the device memory axe keeps cached for reuse (the blocks of freed DistTensors) back to
    the system, so that torch's allocator may use it; returns its bytes. Live DistTensors keep
    theirs; 0 on the host backend. Local to this rank, like torch.cuda.empty_cache(); it waits
    for axe's pending work first (at most the runtime's timeout)."""
    _require_runtime()
    return _axe.empty_cache()


def _framework(x):
    t = type(x)
    return "torch" if t.__module__.split(".")[0] == "torch" else "numpy"


def _is_bf16(x):
    dt = getattr(x, "dtype", None)
    return dt is not None and str(dt) in ("bfloat16", "torch.bfloat16")


def _as_array(x, dtype):
    """(array for nanobind, dtype name or '') of a numpy array, torch tensor or array-like."""
    if _framework(x) == "torch":
        if x.device.type != "cpu":
            x = x.cpu()
        x = x.contiguous()
        if str(x.dtype) == "torch.bfloat16":
            return x.view(__import__("torch").int16), "bf16"
        return x, dtype or ""
    a = np.ascontiguousarray(x)
    if _is_bf16(a):
        return a.view(np.uint16), "bf16"
    return a, dtype or ""


_DEVICES = {}


def _cuda_device():
    """This rank's GPU as a torch device (the cuda backend uses local rank % device count);
    computed once per local rank (every redistribute of a torch tensor asks)."""
    r = local_rank()
    d = _DEVICES.get(r)
    if d is None:
        import torch
        d = _DEVICES[r] = torch.device("cuda", r % max(1, torch.cuda.device_count()))
    return d


def _torch_stream(stream, device):
    """The torch stream object of `stream`: a torch.cuda.Stream / ExternalStream as given, an
    integer CUDA stream handle wrapped in torch.cuda.ExternalStream, or None: torch's current
    stream on `device`."""
    import torch
    if stream is None:
        return torch.cuda.current_stream(device)
    if isinstance(stream, int):
        return torch.cuda.ExternalStream(stream, device=device)
    if not hasattr(stream, "cuda_stream"):
        raise Error("stream: expected a torch.cuda.Stream or an integer CUDA stream handle, got %r" % (stream,))
    return stream


def _stream_handle(stream, device):
    """The CUDA stream handle (an int; 0 is the legacy default stream, torch's default current
    stream) that axe orders its work with: `stream` as _torch_stream takes it."""
    if isinstance(stream, int):
        return stream
    return int(_torch_stream(stream, device).cuda_stream)


class DistTensor:
    """A tensor sharded over a mesh by an Axe layout: (global shape, dtype, layout, mesh, local
    buffer). Made by axe.distribute / axe.from_local / redistribute; immutable in its layout."""

    __slots__ = ("_t", "_framework", "__weakref__")

    def __init__(self, impl, framework="numpy"):
        self._t = impl
        self._framework = framework

    # --- what it is ---
    @property
    def shape(self):
        return tuple(self._t.shape)

    @property
    def dtype(self):
        """axe's dtype name: f32, f16, bf16, f64, i32, i64 or u8."""
        return self._t.dtype

    @property
    def dist_layout(self):
        return self._t.dist_layout

    @property
    def layout(self):
        return self._t.dist_layout.layout

    @property
    def mesh(self):
        return self._t.dist_layout.mesh

    device_mesh = mesh  # DTensor's name

    @property
    def placements(self):
        """The DTensor-style placements (a list of axe.Shard/Replicate/Partial), or None for a
        layout no placements express."""
        return self._t.dist_layout.placements

    @property
    def last_plan(self):
        """The outline of the plan of the redistribution that made this tensor ('' if none)."""
        return self._t.last_plan

    # --- the local shard, without a copy ---
    @property
    def local(self):
        """This rank's shard as an array of the caller's framework over axe's own buffer (no copy;
        writes land in the tensor). Shape: the held sub-tensor (DTensor's local shape) where the
        storage is a strided array, else the raw storage buffer (1-D, see `local_storage`).
        On the cuda backend (torch) torch's current stream waits for axe's pending work by an
        event, with no host wait (local_array(stream=) for another stream); elsewhere the host
        waits for it."""
        return self.local_array(self._framework)

    def to_local(self):
        """DTensor's name for `local`."""
        return self.local

    @property
    def local_buffer(self):
        """The whole local storage buffer, 1-D (padding included; slot i holds the element that
        `local_storage` maps there), without a copy."""
        return self.local_array(self._framework, raw=True)

    def local_array(self, framework="numpy", raw=False, stream=None):
        """The local shard as 'numpy', 'torch' or 'dlpack' (an object with __dlpack__); raw: the
        whole storage buffer (see local_buffer). 'torch' on the cuda backend: a CUDA tensor over
        axe's buffer, ordered by an event: `stream` (a torch.cuda.Stream or an int handle; default
        torch's current stream) waits for axe's pending work on the buffer, without a host wait,
        and the buffer's memory is freed only after the work enqueued on that stream by then
        (use the tensor on another stream only after ordering that stream after this one, as
        with torch's own memory). Otherwise the host waits for axe's work first."""
        device_id, handle = 0, None
        if framework == "torch" and backend() == "cuda":
            device = _cuda_device()
            device_id = device.index
            handle = _stream_handle(stream, device)
        a = self._t.local_array(framework, device_id, raw, handle)
        if self.dtype == "bf16" and framework == "numpy" and _ml_dtypes is not None:
            a = a.view(_ml_dtypes.bfloat16)
        return a

    @property
    def local_storage(self):
        """The storage layout of the local buffer (memory slot of each held element)."""
        return self._t.dist_layout.local_shard(rank())["storage"]

    def _on_cuda(self):
        return self._framework == "torch" and _axe.backend() == "cuda"

    # --- collective operations ---
    def redistribute(self, placements=None, mesh=None, *, device_mesh=None, stream=None):
        """A new tensor in `placements` ('S(1),R', [axe.Shard(1), ...], an axe.Layout or layout
        text) on `mesh` (default: this tensor's). This tensor is untouched. Collective. DTensor's
        order `redistribute(mesh, placements)` and `device_mesh=` work too.
        A torch tensor on the cuda backend is ordered with `stream` (a torch.cuda.Stream or an int
        handle; default: torch's current stream) by events, never by a host wait: axe's work
        starts after everything enqueued on `stream` so far (kernels that write this shard), and
        work enqueued on `stream` afterwards runs after axe's (the next kernel may read
        `r.local`). Returns before the data has moved."""
        if isinstance(placements, _axe.Mesh):
            placements, mesh = mesh, placements
        mesh = mesh if mesh is not None else device_mesh
        if placements is None:
            raise Error("redistribute: no placements given")
        handle = _stream_handle(stream, _cuda_device()) if self._on_cuda() else None
        return DistTensor(self._t.redistribute(placements, mesh, handle), self._framework)

    def _wait_for_torch(self):
        """Before a host read: axe's work waits for torch's current stream (kernels that may still
        write this shard); the read itself then synchronizes on the host."""
        if self._on_cuda():
            _axe._wait_for_stream(_stream_handle(None, _cuda_device()))

    def full_tensor(self):
        """The global tensor (partial terms reduced) on every rank, as a new numpy array (torch
        when the tensor came from torch; a CPU tensor). Collective. The host waits for the data
        (after torch's current stream, on the cuda backend)."""
        self._wait_for_torch()
        return self._wrap_global(self._t.full_tensor())

    def gather(self, root=0):
        """The global tensor on `root` (None elsewhere). Collective; waits as full_tensor."""
        self._wait_for_torch()
        return self._wrap_global(self._t.gather(root))

    def synchronize(self):
        """Waits on the host for this rank's pending axe work (the explicit host wait; the stream
        ordering of redistribute and `local` needs none)."""
        self._t.synchronize()

    def buffer_address(self):
        """The address of this rank's local buffer (device memory on the cuda backend): `local`
        is a view at this address plus the shard's offset."""
        return self._t.buffer_address()

    def visualize(self):
        """Who holds which block, like DTensor's visualize_sharding (text; no communication)."""
        return self._t.visualize()

    def _wrap_global(self, a):
        if a is None:
            return None
        if self.dtype == "bf16" and _ml_dtypes is not None:
            a = a.view(_ml_dtypes.bfloat16)
        if self._framework == "torch":
            import torch
            if self.dtype == "bf16":
                return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
            return torch.from_numpy(a)
        return a

    def __repr__(self):
        return "axe.DistTensor(shape=%s, dtype=%s, layout=%s, mesh=%s)" % (
            self.shape, self.dtype, self.layout, self.mesh)


def distribute(tensor, mesh, placements, src_rank=0, dtype=None, stream=None):
    """DTensor's distribute_tensor: the global `tensor` (numpy array, torch tensor or array-like)
    laid out on `mesh` by `placements` ('S(0),R', [axe.Shard(0), axe.Replicate()],
    axe.Partial('sum'), an axe.Layout or layout text). With src_rank=r, rank r's data is scattered
    (the others pass a tensor of the same shape and dtype, not read); with src_rank=None every rank
    holds the same global tensor and keeps its own shard (no communication). `dtype`: 'bf16' for a
    uint16 array of bf16 bits. Collective.
    A torch CUDA tensor on the cuda backend stays on the device (no host copy): it is wrapped
    (from_local on rank src_rank alone, or Replicate() on every rank) and redistributed to
    `placements`, ordered with `stream` (default torch's current stream) by events as
    DistTensor.redistribute is; with src_rank=None the result never aliases `tensor`."""
    _require_runtime()
    fw = _framework(tensor)
    if isinstance(placements, AxisPlacementType):
        placements = [placements]
    if fw == "torch" and tensor.is_cuda and _axe.backend() == "cuda":
        return _distribute_cuda(tensor, mesh, placements, src_rank, dtype, stream)
    a, dt = _as_array(tensor, dtype)
    return DistTensor(_axe._DistTensor.distribute(a, dt, placements, mesh, src_rank), fw)


def _distribute_cuda(tensor, mesh, placements, src_rank, dtype, stream):
    """distribute for a torch CUDA tensor on the cuda backend, on the device: the global tensor as
    a replicated DistTensor (on rank src_rank alone, or a copy on every rank), then redistribute."""
    import torch
    device = _cuda_device()
    ts = _torch_stream(stream, device)
    shape = tuple(tensor.shape)
    with torch.cuda.stream(ts):
        if src_rank is None:
            # A private copy: a view result (R -> S(0)) must not alias the caller's tensor.
            x = tensor.to(device).contiguous().clone()
            src_mesh = _axe.Mesh(axe_world=world_size())
        else:
            if not 0 <= src_rank < world_size():
                raise Error("distribute: src_rank %d outside the world of %d ranks" % (src_rank, world_size()))
            x = tensor.to(device).contiguous() if rank() == src_rank else tensor.new_empty(0, device=device)
            src_mesh = _axe.Mesh(axe_root=1, ranks=[src_rank])
    src = from_local(x, src_mesh, [_axe.Replicate()], shape, dtype=dtype, stream=ts)
    return src.redistribute(placements, mesh, stream=ts)


AxisPlacementType = _axe.AxisPlacement


def from_local(local, mesh, placements, shape, dtype=None, stream=None):
    """DTensor's from_local: this rank's shard `local` of a global tensor of `shape`. When `local`
    is the whole storage buffer (contiguous, as many elements as the layout's local buffer: every
    even placement) the tensor aliases its memory without a copy (keep it alive and unwritten
    while axe reads it); otherwise (an uneven short shard, a strided array) it is copied into a
    padded buffer (a torch CUDA shard: on the device). Collective.
    A torch CUDA tensor on the cuda backend: axe's later work waits for `stream` (default torch's
    current stream) by an event, no host wait, so kernels enqueued there before this call may
    still be writing `local`. Its memory stays torch's: the tensor's use on `stream` is recorded
    (Tensor.record_stream), so once freed torch reuses it only after the work enqueued there,
    which waits for every axe read ordered with that stream (redistribute(stream=) with the same
    stream, the default). A copy made by redistribute does not keep `local` alive; a view does."""
    _require_runtime()
    if isinstance(placements, AxisPlacementType):
        placements = [placements]
    fw = _framework(local)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    layout = _axe.shard(shape, mesh, placements)
    if fw == "torch" and local.is_cuda:
        import torch
        arr, dt = local, dtype or ""
        if str(arr.dtype) == "torch.bfloat16":
            arr, dt = arr.view(torch.int16), "bf16"
        n = layout.local_elements if layout.mesh.contains(rank()) else 0
        ts = _torch_stream(stream, arr.device)
        buf = arr if arr.is_contiguous() and arr.numel() == n else None
        view = None if buf is not None else _axe._local_strides(layout, rank())
        if view is not None and tuple(arr.shape) == tuple(view[1]):
            offset, vshape, vstrides = view
            with torch.cuda.stream(ts):  # the padded buffer, written on the caller's stream
                buf = torch.zeros(n, dtype=arr.dtype, device=arr.device)
                if n:
                    torch.as_strided(buf, vshape, vstrides, offset).copy_(arr)
        if buf is not None:
            _axe._wait_for_stream(int(ts.cuda_stream))
            if buf.numel():
                # torch's allocator reuses the memory once freed only after the work enqueued on
                # ts by then, which waits for axe's reads (redistribute signals its stream).
                buf.record_stream(ts)
            return DistTensor(_axe._DistTensor.from_local(buf, local if buf is arr else buf, dt, layout), fw)
        local = arr.cpu().numpy()  # the wrong shape: the error below, on every rank
    elif fw == "torch":
        arr = local if local.is_contiguous() else local.contiguous()
        dt = "bf16" if str(arr.dtype) == "torch.bfloat16" else (dtype or "")
        if dt == "bf16":
            import torch
            arr = arr.view(torch.int16)
        if arr.numel() == layout.local_elements and arr.is_contiguous():
            return DistTensor(_axe._DistTensor.from_local(arr, local, dt, layout), fw)
        local = arr.cpu().numpy()
    a = np.asarray(local)
    dt = dtype or ""
    if _is_bf16(a):
        a, dt = a.view(np.uint16), "bf16"
    n = layout.local_elements if layout.mesh.contains(rank()) else 0
    if a.flags.c_contiguous and a.size == n and a.flags.writeable:
        return DistTensor(_axe._DistTensor.from_local(a.reshape(-1), a, dt, layout), fw)
    view = _axe._local_strides(layout, rank())
    if view is None:
        raise Error("from_local: the local shard of %s is no strided array; pass the whole storage buffer "
                    "(%d elements)" % (layout, n))
    offset, vshape, vstrides = view
    if tuple(a.shape) != tuple(vshape):
        # Every rank must fail alike (the others are already in the collective wrap): pass an
        # empty buffer, which the ranks' agreement rejects everywhere, and name the shape here.
        why = "from_local: rank %d holds a shard of shape %s of %s, got an array of shape %s" % (
            rank(), tuple(vshape), layout, tuple(a.shape))
        try:
            empty = np.empty(0, a.dtype)
            _axe._DistTensor.from_local(empty, empty, dt, layout)
        except Error as e:
            raise Error(why + " (" + str(e) + ")") from None
        raise Error(why)
    buf = np.zeros(n, dtype=a.dtype)
    item = a.dtype.itemsize
    if n:
        dst = np.lib.stride_tricks.as_strided(buf[offset:], shape=vshape, strides=[s * item for s in vstrides])
        dst[...] = a
    return DistTensor(_axe._DistTensor.from_local(buf, buf, dt, layout), fw)


def visualize(t, header="", use_rank=0):
    """Who holds which block of `t`, like DTensor's visualize_sharding: printed on rank `use_rank`
    (None: on every rank), and returned as text on every rank."""
    text = (header + "\n" if header else "") + t.visualize()
    if use_rank is None or rank() == use_rank:
        print(text, end="" if text.endswith("\n") else "\n")
    return text


def init_device_mesh(device_type, mesh_shape, mesh_dim_names=None):
    """DTensor's init_device_mesh: an axe.Mesh of `mesh_shape` named `mesh_dim_names` (default
    dim0, dim1, ...), ranks row-major. `device_type` is accepted for the familiar call; the
    backend is the runtime's (axe.init)."""
    shape = (mesh_shape,) if isinstance(mesh_shape, int) else tuple(mesh_shape)
    names = tuple(mesh_dim_names) if mesh_dim_names else tuple("dim%d" % i for i in range(len(shape)))
    if len(names) != len(shape):
        raise Error("init_device_mesh: %d names for a mesh of %d dims" % (len(names), len(shape)))
    return _axe.Mesh(list(zip(names, shape)))


# DTensor's names for the same functions.
distribute_tensor = distribute
visualize_sharding = visualize
DistTensor.from_local = staticmethod(from_local)
