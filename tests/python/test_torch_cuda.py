"""torch CUDA tensors on axe's cuda backend, run by CTest (python_torch_cuda_np2, through
with_torch_cuda.sh) under mpirun -np 2 on the GPUs there are: ranks may share one GPU (the backend
then moves data through its peer transport). Skipped, with the reason, without torch, without a
CUDA GPU, or without the cuda backend in this build of axe.

What it holds axe to:
  - every placement pair of DTensor's vocabulary on a 1-D mesh (Shard(0), Shard(1), Replicate(),
    Partial("sum") to the same four), even and uneven shapes: each rank's `r.local` is a CUDA
    tensor equal to the shard DTensor's rule gives (torch.chunk for Shard: ceil-sized chunks, a
    short or empty tail; a Partial("sum") destination holds the value on mesh coordinate 0 and
    zeros elsewhere, which is axe's rule: DTensor's Replicate -> Partial divides by the mesh size
    instead, so Partial destinations are compared through their reduced value), and the global
    tensor equals the input;
  - where torch.distributed can start with gloo on the CPU, the same DTensors built by
    torch.distributed.tensor (distribute_tensor / from_local, redistribute) have to_local()
    equal to axe's r.local, element by element (non-Partial destinations);
  - zero copy: `r.local` is a view of axe's buffer (the same data_ptr on every access, at the
    buffer's address) and writes through it land in the tensor;
  - stream order without host waits: a source written on a side stream behind a slow kernel
    (torch.cuda._sleep), redistributed with stream=side and read on the side stream, is correct
    with no synchronize in between; the same without the ordering reads the stale source (the
    control that shows the test can fail);
  - from_local of CUDA shards (even: aliased; uneven: padded on the device) and distribute with
    src_rank=None (no alias of the input), bf16.
Every rank runs the same tests in the same order, so the collectives line up.
"""
import datetime
import math
import os
import socket

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed in this interpreter")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA GPU", allow_module_level=True)

import axe  # noqa: E402  (after torch: the extension is loaded RTLD_GLOBAL)

if not axe._axe.HAVE_RUNTIME or "cuda" not in axe._axe._backends():
    pytest.skip("this build of axe has no cuda backend (or no runtime)", allow_module_level=True)

# ~0.5 s of spinning on an H100 (torch.cuda._sleep counts clock cycles, ~2 GHz): far longer than
# a prepared redistribute, so a missing wait reads the stale source every time.
SLOW_CYCLES = int(1e9)

PLACEMENTS = {"S0": axe.Shard(0), "S1": axe.Shard(1), "R": axe.Replicate(), "P": axe.Partial("sum")}
SHAPES = [(8, 6), (5, 3), (3, 7), (1, 5)]  # even; uneven in both dims; an empty shard on dim 0


@pytest.fixture(scope="module", autouse=True)
def runtime():
    axe.init(backend="cuda")
    torch.cuda.set_device(device())
    yield


def device():
    """This rank's GPU: the backend's (local rank % device count)."""
    return torch.device("cuda", axe.local_rank() % torch.cuda.device_count())


def mesh():
    return axe.Mesh(gpu=axe.world_size())


def global_x(shape, dtype=torch.float32):
    """The global tensor on the CPU: 1, 2, 3, ... (exact in every dtype used here)."""
    n = math.prod(shape)
    return (torch.arange(n, dtype=torch.float64).reshape(shape) + 1).to(dtype)


def chunk(n, p, i):
    """axe's rule for an uneven Shard: ceil-sized chunks, a short or empty tail."""
    c = -(-n // p)
    b = min(i * c, n)
    return b, min(b + c, n)


def torch_chunk(x, dim, p, i):
    """DTensor's rule: torch.chunk, ranks past the last chunk empty."""
    parts = torch.chunk(x, p, dim=dim)
    return parts[i] if i < len(parts) else x.narrow(dim, 0, 0)


def expected_local(x, placement, r, p):
    """Rank r's shard of x on a 1-D mesh of p ranks (CPU). For Shard, axe's rule, checked equal to
    DTensor's torch.chunk rule."""
    if placement.is_shard():
        d = placement.dim % x.ndim
        b, e = chunk(x.shape[d], p, r)
        mine = x.narrow(d, b, e - b)
        assert torch.equal(mine, torch_chunk(x, d, p, r)), "axe's uneven split differs from torch.chunk"
        return mine
    if placement.is_partial():
        return x.clone() if r == 0 else torch.zeros_like(x)
    return x


def local_error(t, want, what):
    """"" when this rank's `t.local` is a CUDA tensor on its GPU equal to `want`, else why. (Tests
    collect these and assert after their last collective, so a failure on one rank never leaves
    the other waiting in a collective.)"""
    loc = t.local
    if not loc.is_cuda or loc.device != device():
        return "%s: local is on %s, expected %s" % (what, loc.device, device())
    if loc.dtype != want.dtype:
        return "%s: dtype %s, expected %s" % (what, loc.dtype, want.dtype)
    if tuple(loc.shape) != tuple(want.shape):
        return "%s: rank %d holds %s, expected %s" % (what, axe.rank(), tuple(loc.shape), tuple(want.shape))
    # .cpu() runs on torch's current stream, which `local` made wait for axe's work: no sync.
    got = loc.cpu()
    if not torch.equal(got, want):
        return "%s: rank %d\ngot %s\nexpected %s" % (what, axe.rank(), got, want)
    return ""


def no_errors(errors):
    errors = [e for e in errors if e]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dst", list(PLACEMENTS))
@pytest.mark.parametrize("src", list(PLACEMENTS))
def test_placement_pair(src, dst, shape):
    x = global_x(shape)
    m, r, p = mesh(), axe.rank(), axe.world_size()
    t = axe.distribute(x.to(device()), m, [PLACEMENTS[src]])  # rank 0's tensor, scattered
    errors = [local_error(t, expected_local(x, PLACEMENTS[src], r, p), "distribute %s" % src)]
    u = t.redistribute([PLACEMENTS[dst]])
    errors.append(local_error(u, expected_local(x, PLACEMENTS[dst], r, p), "%s -> %s" % (src, dst)))
    g, g0 = u.full_tensor(), t.full_tensor()
    errors.append("" if torch.equal(g, x) else "%s -> %s: full_tensor differs on rank %d" % (src, dst, r))
    errors.append("" if torch.equal(g0, x) else "%s -> %s: the source changed" % (src, dst))
    no_errors(errors)


# ---- DTensor on the CPU (gloo) as the reference ----------------------------------------------

def max_over_ranks(v):
    """The maximum of a number over the ranks, through axe (a Partial('max') reduced)."""
    mine = torch.tensor([float(v)], dtype=torch.float64, device=device())
    return axe.from_local(mine, mesh(), axe.Partial("max"), shape=(1,)).full_tensor()[0].item()


def free_port():
    """MASTER_PORT when set, else a port free on rank 0, agreed by every rank."""
    if os.environ.get("MASTER_PORT"):
        return int(os.environ["MASTER_PORT"])
    port = 0
    if axe.rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    return int(max_over_ranks(port))


@pytest.fixture(scope="module")
def dtensor():
    """torch.distributed.tensor on a CPU mesh of every rank (gloo), or a skip with the reason (on
    every rank alike: the ranks agree on whether it started)."""
    why = ""
    try:
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh
        try:
            from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
        except ImportError:  # torch < 2.4
            from torch.distributed._tensor import DTensor, Replicate, Shard, distribute_tensor
            from torch.distributed._tensor.placement_types import _Partial as Partial
        if not dist.is_available() or not dist.is_gloo_available():
            why = "torch.distributed has no gloo backend"
    except ImportError as e:
        why = "torch.distributed.tensor (DTensor) is not importable: %s" % e
    port = free_port()
    started = False
    if not why and not dist.is_initialized():
        try:
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=axe.rank(),
                                    world_size=axe.world_size(), timeout=datetime.timedelta(seconds=60))
            started = True
        except Exception as e:  # noqa: BLE001 - any failure to start means: no reference here
            why = "torch.distributed with gloo did not start on rank %d: %s" % (axe.rank(), e)
    if max_over_ranks(1 if why else 0):
        if started:
            dist.destroy_process_group()
        pytest.skip(why or "torch.distributed with gloo did not start on another rank")
    cpu_mesh = init_device_mesh("cpu", (axe.world_size(),))
    places = {"S0": Shard(0), "S1": Shard(1), "R": Replicate(), "P": Partial()}
    yield dict(dist=dist, mesh=cpu_mesh, DTensor=DTensor, distribute_tensor=distribute_tensor, places=places)
    if started:
        dist.destroy_process_group()


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dst", ["S0", "S1", "R"])
@pytest.mark.parametrize("src", list(PLACEMENTS))
def test_matches_dtensor(dtensor, src, dst, shape):
    x = global_x(shape)
    D = dtensor
    mesh_cpu, places = D["mesh"], D["places"]
    if src == "P":  # distribute_tensor takes no Partial: the value on rank 0, zeros elsewhere, as axe's
        local = x.clone() if axe.rank() == 0 else torch.zeros_like(x)
        d = D["DTensor"].from_local(local, mesh_cpu, [places["P"]], run_check=False)
    else:
        d = D["distribute_tensor"](x, mesh_cpu, [places[src]])
    if src != "R" and dst != "R":
        # Through Replicate (the same value by DTensor's definition): gloo has all-reduce and
        # all-gather in every torch version, reduce-scatter and all-to-all not in all.
        d = d.redistribute(mesh_cpu, [places["R"]])
    want = d.redistribute(mesh_cpu, [places[dst]]).to_local().contiguous()
    u = axe.distribute(x.to(device()), mesh(), [PLACEMENTS[src]]).redistribute([PLACEMENTS[dst]])
    no_errors([local_error(u, want, "%s -> %s against DTensor" % (src, dst))])


# ---- zero copy -------------------------------------------------------------------------------

def test_local_is_a_view_of_axes_buffer():
    x = global_x((8, 6))
    t = axe.distribute(x.to(device()), mesh(), "S(1)")
    a, b = t.local, t.local
    offset = axe._axe._local_strides(t.dist_layout, axe.rank())[0]
    errors = ["" if a.data_ptr() == b.data_ptr() else "repeated access gives another tensor's memory",
              "" if a.data_ptr() == t.buffer_address() + offset * a.element_size() else
              "local is not at axe's buffer (%#x, buffer %#x)" % (a.data_ptr(), t.buffer_address())]
    r = t.redistribute("R")
    p1, p2 = r.local.data_ptr(), r.local.data_ptr()
    errors.append("" if p1 == p2 == r.buffer_address() else "R: local at %#x, %#x, buffer %#x" % (
        p1, p2, r.buffer_address()))
    a.fill_(7.0)  # on torch's current stream; full_tensor waits for it
    gt, gr = t.full_tensor(), r.full_tensor()
    errors.append("" if torch.equal(gt, torch.full((8, 6), 7.0)) else "a write through local did not land")
    errors.append("" if torch.equal(gr, x) else "the redistributed copy changed with its source")
    no_errors(errors)


def test_empty_cache_gives_back_a_dropped_result():
    """A 4 MiB result (a block of its own, above the 1 MiB of the shared slabs) dropped: empty_cache
    gives at least its 4 MiB back, a second call nothing; the source stays intact."""
    x = torch.arange(1024 * 1024, dtype=torch.float32).reshape(1024, 1024)
    t = axe.distribute(x.to(device()), mesh(), "S(0)")
    r = t.redistribute("R")
    del r
    first, second = axe.empty_cache(), axe.empty_cache()
    no_errors(["" if first >= 4 << 20 else "empty_cache gave back %d bytes, fewer than the dropped 4 MiB" % first,
               "" if second == 0 else "a second empty_cache gave back %d bytes" % second,
               "" if torch.equal(t.full_tensor(), x) else "the source changed"])


# ---- stream order ----------------------------------------------------------------------------

def _side_stream_case(order_with_side, handle):
    x = global_x((64, 48))
    m, r, p = mesh(), axe.rank(), axe.world_size()
    mine = expected_local(x, axe.Shard(0), r, p).to(device())
    t = axe.distribute(torch.zeros_like(x, device=device()), m, "S(0)")
    t.redistribute("R").full_tensor()  # the plans prepared (and compiled) before the clock runs
    torch.cuda.synchronize()  # the set-up is done; from here on nothing waits on the host
    side = torch.cuda.Stream(device=device())
    with torch.cuda.stream(side):
        src = t.local  # ordered on `side`
        torch.cuda._sleep(SLOW_CYCLES)  # a slow kernel: the source is written ~0.5 s from now
        src.copy_(mine)
    if not order_with_side:
        u = t.redistribute("R")  # ordered with the current (default) stream only
        got = u.full_tensor()  # a host read: waits for axe, not for `side`
        side.synchronize()
        return x, got
    with torch.cuda.stream(side):
        u = t.redistribute("R", stream=side.cuda_stream if handle else side)
        out = u.local.clone()  # the next kernel on `side` reads the result
        out2 = u.local_array("torch", stream=side).clone()
    side.synchronize()  # the caller's only wait: its own stream, at the end
    assert torch.equal(out2.cpu(), x)
    return x, out.cpu()


@pytest.mark.parametrize("handle", [False, True], ids=["torch_stream", "int_handle"])
def test_redistribute_on_a_side_stream_needs_no_synchronize(handle):
    x, got = _side_stream_case(True, handle)
    assert torch.equal(got, x), "rank %d read a result that did not wait for the side stream" % axe.rank()


def test_without_the_side_stream_the_plan_reads_the_stale_source():
    # The control: the slow kernel does hold the source back, so the test above can fail.
    x, got = _side_stream_case(False, False)
    assert not torch.equal(got, x), "the source was written before axe read it: the control shows nothing"
    assert torch.equal(got, torch.zeros_like(x)), "expected the stale (zero) source"


# ---- from_local, distribute, dtypes ----------------------------------------------------------

@pytest.mark.parametrize("shape", [(8, 6), (5, 3)], ids=["even", "uneven"])
def test_from_local_of_a_shard_written_by_a_kernel(shape):
    x = global_x(shape)
    r, p = axe.rank(), axe.world_size()
    want = expected_local(x, axe.Shard(0), r, p).to(device())
    local = torch.empty_like(want)
    torch.cuda._sleep(SLOW_CYCLES // 4)
    local.copy_(want)  # still pending when from_local returns
    t = axe.from_local(local, mesh(), [axe.Shard(0)], shape=shape)
    u = t.redistribute("R")
    errors = [local_error(u, x, "from_local %s then R" % (shape,))]
    if want.numel() == t._t.buffer_bytes() // 4:  # the whole storage buffer: aliased, no copy
        errors.append("" if t.buffer_address() == local.data_ptr() else "a whole-buffer shard was copied")
    no_errors(errors)


def test_distribute_every_rank_holds_x_does_not_alias_it():
    x = global_x((8, 6))
    xd = x.to(device())
    t = axe.distribute(xd, mesh(), "S(0)", src_rank=None)
    errors = [local_error(t, expected_local(x, axe.Shard(0), axe.rank(), axe.world_size()), "src_rank=None")]
    xd.fill_(-1.0)
    errors.append("" if torch.equal(t.full_tensor(), x) else "the distributed tensor aliases its input")
    no_errors(errors)


def test_bf16():
    x = global_x((6, 4), torch.bfloat16)
    t = axe.distribute(x.to(device()), mesh(), "S(0)")
    u = t.redistribute("S(1)")
    errors = [local_error(u, expected_local(x, axe.Shard(1), axe.rank(), axe.world_size()), "bf16 S0 -> S1")]
    g = u.full_tensor()
    errors.append("" if g.dtype == torch.bfloat16 and torch.equal(g, x) else "bf16 full_tensor: %s" % g)
    no_errors(errors)
