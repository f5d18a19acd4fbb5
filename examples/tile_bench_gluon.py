#!/usr/bin/env python3
"""tile_bench_gluon: Triton Gluon's gl.convert_layout timed on one CTA, with tile_bench's protocol.

    python3 examples/tile_bench_gluon.py --from THREADS --to THREADS --shape S --dtype T --warps W
        [--iters N] [--launches K] [--json] [--axe PATH]
    python3 examples/tile_bench_gluon.py --cases [--iters N] [--launches K] [--json] [--axe PATH]
    python3 examples/tile_bench_gluon.py ... --compile-only [--arch 90]     (no GPU needed)

Same flags and output as the C++ `tile_bench`, so the two are interchangeable in scripts.

Protocol (one CTA: grid = 1, num_warps = W):
  load the tile of shape S (row-major, contiguous in global memory) in layout A (--from);
  ITERS times: convert A->B (gl.convert_layout), op, convert B->A, op;
  store the tile, in layout A, to an output buffer.
  op is a runtime-valued elementwise identity the compiler cannot fold: x * scale with scale = 1.0
  (a kernel argument) for float dtypes, x ^ zero with zero = 0 (a kernel argument) for integer
  dtypes. ITERS is a runtime kernel argument (not specialised), so one compiled kernel runs both
  ITERS = 0 and ITERS = N and the loop cannot be unrolled away.
  Correctness first: after a launch with ITERS = N (and one with ITERS = 0) the output must equal
  the random input bit for bit (floats: random normals, for which x * 1.0 is exact; integers:
  random bytes).
  Timing: after warm-up, K launches (K >= 50) of each of ITERS = N and ITERS = 0, interleaved,
  each bracketed by CUDA events (a torch.cuda._sleep kernel queued ahead of every 10 pairs keeps
  the host's launch latency out of the event pairs); ns_per_round_trip = (median(N) - median(0))
  / N. Tiles are rank 1 or 2, extents powers of two (gl.arange).

Output: one human line,
    gluon 64x64 f32 blocked:1,4/8,4/4,1/1,0->blocked:4,1/4,8/1,4/0,1: 319.2 ns per round trip (correct)
or, with --json, one JSON object: ns_per_round_trip, correct, mechanism, from, to, shape, dtype,
warps, iters, launches, median_ns_iters, median_ns_zero, gpu, triton_version (plus shared_bytes,
the kernel's static shared memory). "mechanism" is "triton:" followed by what the compiled kernel
uses for its conversions: "shared" (st/ld.shared), "shfl" (warp shuffles), both joined by "+",
or "registers" (no data movement between threads).
--cases runs the built-in list (CASES below) and prints a table, or a JSON list with --json.
--compile-only compiles the kernel(s) for --arch (default 90) without a GPU (triton.compile with
a GPUTarget) and reports mechanism and shared memory instead of times.

THREADS (the thread-layout spec shared with tile_bench):
  blocked:SPT/TPW/WPC[/ORDER]  gl.BlockedLayout(size_per_thread, threads_per_warp, warps_per_cta,
                               order); comma-separated ints; ORDER defaults to rank-1, ..., 0.
                               e.g. blocked:1,4/8,4/4,1/1,0
  mma:WPC                      mma.sync m16n8 accumulator:
                               gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=WPC,
                               instr_shape=[16, 8])
  wgmma:N/WPC                  wgmma accumulator: gl.NVMMADistributedLayout(version=[3, 0],
                               warps_per_cta=WPC, instr_shape=[16, N, 16]); the accumulator layout
                               depends on M = 16 and N only (K, the third entry, does not enter it)
  slice:D:PARENT               gl.SliceLayout(D, PARENT): the tensor has shape S; the parent lives
                               on S with dim D inserted (for a Triton-native parent its extent does
                               not matter; for linear/Axe parents it is the parent's own extent)
  linear:{"reg":[[..]],"lane":[[..]],"warp":[[..]]}
                               gl.DistributedLinearLayout with these bases (logical coordinates,
                               [dim0, dim1, ...]); lane bases padded with zero bases to 5 (32
                               lanes), warp bases to log2(W); "block" bases optional (must be empty
                               on one CTA). Triton's rules are checked up front: register and
                               lane bases move along one dim at most, and the bases must reach
                               every element of the tile
  anything else                an Axe layout text, e.g. "S[(4,4):(1@lane,1)]": converted by
                               `axe linear LAYOUT --shape S --json` (axe CLI from --axe, else `axe`
                               on PATH, else build/bin/axe in the repository) into a
                               DistributedLinearLayout (in.m -> reg, in.lane -> lane, in.warp ->
                               warp, padded as for linear:)
dtypes: u8 i8 u16 i16 f16 bf16 u32 i32 f32 u64 i64 f64 (u16/u32/u64 run as the signed type of the
same width where the installed torch has no torch.uint16/32/64: it is data movement plus xor 0).

Exit status: 0 when every case is correct, 1 when a result is wrong, 2 on bad input (unknown
dtype, malformed layout spec, warps or rank that do not match), 3 when Triton/torch are missing or
a kernel fails to compile.

Targets the Gluon API of triton >= 3.4 (triton.experimental.gluon, gl.BlockedLayout,
gl.SliceLayout, gl.NVMMADistributedLayout, gl.DistributedLinearLayout, gl.convert_layout); checked
against triton 3.9.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

# The cases: (from, to, shape, dtype, warps, Triton's ns per round trip on one H100).
CASES = [
    ("blocked:1,4/8,4/4,1/1,0", "blocked:4,1/4,8/1,4/0,1", "64x64", "f32", 4, 319),
    ("blocked:1,8/16,2/4,1/1,0", "blocked:8,1/2,16/1,4/0,1", "128x64", "f16", 4, 429),
    ("wgmma:128/4,1", "blocked:1,4/4,8/4,1/1,0", "128x128", "f32", 4, 1146),
    ("blocked:1,4/4,8/1,1/1,0", "blocked:4,1/8,4/1,1/0,1", "32x32", "f32", 1, 196),
    ("blocked:4/32/4/0", "blocked:1/32/4/0", "2048", "f32", 4, 200),
]

# name -> (triton pointer element type, torch dtype name, fallback torch dtype name, is_float)
DTYPES = {
    "u8": ("u8", "uint8", None, False),
    "i8": ("i8", "int8", None, False),
    "u16": ("u16", "uint16", "int16", False),
    "i16": ("i16", "int16", None, False),
    "f16": ("fp16", "float16", None, True),
    "bf16": ("bf16", "bfloat16", None, True),
    "u32": ("u32", "uint32", "int32", False),
    "i32": ("i32", "int32", None, False),
    "f32": ("fp32", "float32", None, True),
    "u64": ("u64", "uint64", "int64", False),
    "i64": ("i64", "int64", None, False),
    "f64": ("fp64", "float64", None, True),
}

LANES = 32  # threads per warp on NVIDIA GPUs
EXIT_WRONG, EXIT_USAGE, EXIT_ENV = 1, 2, 3


class UsageError(Exception):
    """Bad input: the message is printed and the script exits with status 2."""


class EnvError(Exception):
    """Missing Triton/torch/axe or a failed compile: exit status 3."""


# ---------------------------------------------------------------------------------------------
# Spec parsing: THREADS specs -> Gluon layout objects (LayoutFactory), with every check that
# gives a clear message before Triton sees the layout.
# ---------------------------------------------------------------------------------------------

def parse_shape(text):
    """'64x64', '64,64' or '2048' -> [64, 64] / [2048]; every extent a power of two."""
    parts = text.replace("x", ",").replace("X", ",").split(",")
    try:
        shape = [int(p) for p in parts]
    except ValueError:
        raise UsageError(f"--shape '{text}': expected extents like 64x64 or 2048")
    for e in shape:
        if e <= 0 or e & (e - 1):
            raise UsageError(f"--shape '{text}': every extent must be a power of two "
                             "(gl.arange needs it)")
    if len(shape) not in (1, 2):
        raise UsageError(f"--shape '{text}': only rank 1 and 2 tiles are supported")
    return shape


def shape_text(shape):
    return "x".join(str(e) for e in shape)


def int_list(text, what, spec):
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(f"layout '{spec}': {what} '{text}' is not a comma-separated list of ints")
    if any(v < 0 for v in values):
        raise UsageError(f"layout '{spec}': {what} '{text}' has a negative entry")
    return values


def is_pow2(v):
    return v > 0 and v & (v - 1) == 0


def pad_bases(bases, count, rank, what, spec):
    """Pads a basis list with zero (broadcast) bases to `count` entries."""
    if len(bases) > count:
        raise UsageError(f"layout '{spec}': {len(bases)} {what} bases, but only {count} fit "
                         f"({2 ** count} {what}s)")
    return [list(b) for b in bases] + [[0] * rank for _ in range(count - len(bases))]


def check_bases(bases, rank, what, spec):
    if not isinstance(bases, list):
        raise UsageError(f"layout '{spec}': {what} bases must be a list of lists")
    for b in bases:
        if (not isinstance(b, list) or len(b) != rank
                or not all(isinstance(v, int) and v >= 0 for v in b)):
            raise UsageError(f"layout '{spec}': {what} basis {b} is not a list of {rank} "
                             "non-negative ints (one per tile dim)")


def extent_of(bases, dim):
    """Smallest power of two holding every basis' coordinate along dim (the span along dim)."""
    span = 0
    for b in bases:
        span |= b[dim]
    return 1 << span.bit_length()


def f2_rank(bases, shape):
    """Rank over F2 of the bases, each read as the bit vector of its coordinate (dim bits
    concatenated)."""
    widths = [e.bit_length() - 1 for e in shape]
    pivots = {}  # leading bit -> reduced row
    for b in bases:
        row, shift = 0, 0
        for v, w in zip(reversed(b), reversed(widths)):
            row |= v << shift
            shift += w
        while row:
            top = row.bit_length() - 1
            if top not in pivots:
                pivots[top] = row
                break
            row ^= pivots[top]
    return len(pivots)


class LayoutFactory:
    """Builds Gluon layout objects; `gl` is triton.experimental.gluon.language."""

    def __init__(self, gl, axe_path=None):
        self.gl = gl
        self.axe_path = axe_path

    def build(self, spec, shape, warps):
        """The Gluon layout for `spec` on a tile of `shape` with `warps` warps."""
        layout, rank = self._build(spec, spec, shape, warps)
        if rank != len(shape):
            raise UsageError(f"layout '{spec}' has rank {rank}, but --shape "
                             f"{shape_text(shape)} has rank {len(shape)}")
        return layout

    # Each _build returns (layout, rank); `top` is the whole spec, for messages.
    def _build(self, spec, top, shape, warps):
        kind, sep, body = spec.partition(":")
        if sep and kind == "blocked":
            return self._blocked(body, top, warps)
        if sep and kind == "mma":
            return self._mma(body, top, warps)
        if sep and kind == "wgmma":
            return self._wgmma(body, top, warps)
        if sep and kind == "slice":
            return self._slice(body, top, shape, warps)
        if sep and kind == "linear":
            try:
                obj = json.loads(body)
            except json.JSONDecodeError as e:
                raise UsageError(f"layout '{top}': the JSON after 'linear:' does not parse ({e})")
            if not isinstance(obj, dict):
                raise UsageError(f"layout '{top}': expected a JSON object after 'linear:'")
            unknown = set(obj) - {"reg", "lane", "warp", "block"}
            if unknown:
                raise UsageError(f"layout '{top}': unknown keys {sorted(unknown)} (expected reg, "
                                 "lane, warp, block)")
            return self._linear(obj.get("reg", []), obj.get("lane", []), obj.get("warp", []),
                                obj.get("block", []), shape, warps, top), len(shape)
        return self._axe(spec, top, shape, warps), len(shape)

    def _blocked(self, body, top, warps):
        parts = body.split("/")
        if len(parts) not in (3, 4):
            raise UsageError(f"layout '{top}': expected blocked:SPT/TPW/WPC[/ORDER]")
        spt, tpw, wpc = (int_list(p, w, top) for p, w in
                         zip(parts, ("size_per_thread", "threads_per_warp", "warps_per_cta")))
        rank = len(spt)
        order = int_list(parts[3], "order", top) if len(parts) == 4 else list(range(rank))[::-1]
        if not (len(tpw) == len(wpc) == len(order) == rank):
            raise UsageError(f"layout '{top}': SPT, TPW, WPC and ORDER must have the same length")
        if sorted(order) != list(range(rank)):
            raise UsageError(f"layout '{top}': order {order} is not a permutation of "
                             f"0..{rank - 1}")
        if not all(is_pow2(v) for v in spt + tpw + wpc):
            raise UsageError(f"layout '{top}': SPT, TPW and WPC entries must be powers of two")
        if math.prod(tpw) != LANES:
            raise UsageError(f"layout '{top}': threads_per_warp {tpw} has {math.prod(tpw)} "
                             f"threads, a warp has {LANES}")
        self._check_warps(wpc, warps, top)
        return self.gl.BlockedLayout(size_per_thread=spt, threads_per_warp=tpw,
                                     warps_per_cta=wpc, order=order), rank

    def _mma(self, body, top, warps):
        wpc = int_list(body, "warps_per_cta", top)
        if len(wpc) != 2:
            raise UsageError(f"layout '{top}': expected mma:WPC with 2 entries, e.g. mma:2,2")
        self._check_warps(wpc, warps, top)
        return self._nvmma()(version=[2, 0], warps_per_cta=wpc, instr_shape=[16, 8]), 2

    def _wgmma(self, body, top, warps):
        n_text, sep, wpc_text = body.partition("/")
        if not sep:
            raise UsageError(f"layout '{top}': expected wgmma:N/WPC, e.g. wgmma:128/4,1")
        try:
            n = int(n_text)
        except ValueError:
            raise UsageError(f"layout '{top}': N '{n_text}' is not an int")
        if n < 8 or n > 256 or n % 8:
            raise UsageError(f"layout '{top}': wgmma N must be a multiple of 8 in 8..256")
        wpc = int_list(wpc_text, "warps_per_cta", top)
        if len(wpc) != 2:
            raise UsageError(f"layout '{top}': expected 2 warps_per_cta entries")
        if wpc[0] % 4:
            raise UsageError(f"layout '{top}': wgmma needs warps_per_cta[0] a multiple of 4 "
                             "(whole warp groups along M)")
        self._check_warps(wpc, warps, top)
        return self._nvmma()(version=[3, 0], warps_per_cta=wpc, instr_shape=[16, n, 16]), 2

    def _slice(self, body, top, shape, warps):
        d_text, sep, parent_spec = body.partition(":")
        if not sep or not parent_spec:
            raise UsageError(f"layout '{top}': expected slice:D:PARENT")
        try:
            d = int(d_text)
        except ValueError:
            raise UsageError(f"layout '{top}': slice dim '{d_text}' is not an int")
        if not 0 <= d <= len(shape):
            raise UsageError(f"layout '{top}': slice dim {d} is not in 0..{len(shape)}")
        # The parent's shape: S with dim d inserted. Its extent only matters for linear and Axe
        # parents (their bases must fit their shape), where it is the parent's own extent.
        kind = parent_spec.partition(":")[0]
        if kind in ("blocked", "mma", "wgmma", "slice"):
            extent = 1
        elif kind == "linear" and ":" in parent_spec:
            try:
                obj = json.loads(parent_spec.partition(":")[2])
                bases = [b for k in ("reg", "lane", "warp") for b in obj.get(k, [])]
                check_bases(bases, len(shape) + 1, "parent", top)
                extent = extent_of(bases, d)
            except (json.JSONDecodeError, AttributeError):
                raise UsageError(f"layout '{top}': the parent's JSON does not parse")
        else:
            total = math.prod(self._run_axe(parent_spec, None, top)["out"])
            extent = total // math.prod(shape)
            if extent * math.prod(shape) != total:
                raise UsageError(f"layout '{top}': the Axe parent has {total} elements, not a "
                                 f"multiple of the tile's {math.prod(shape)}")
        parent_shape = shape[:d] + [extent] + shape[d:]
        parent, rank = self._build(parent_spec, top, parent_shape, warps)
        if rank != len(shape) + 1:
            raise UsageError(f"layout '{top}': the parent has rank {rank}; slicing it does not "
                             f"give rank {len(shape)}")
        return self.gl.SliceLayout(dim=d, parent=parent), rank - 1

    def _linear(self, reg, lane, warp, block, shape, warps, top):
        rank = len(shape)
        for bases, what in ((reg, "reg"), (lane, "lane"), (warp, "warp"), (block, "block")):
            check_bases(bases, rank, what, top)
        if block:
            raise UsageError(f"layout '{top}': block bases must be empty (one CTA)")
        for b in reg + lane + warp:
            for v, e in zip(b, shape):
                if v >= e:
                    raise UsageError(f"layout '{top}': basis {b} is not a coordinate inside "
                                     f"the shape {shape_text(shape)}")
        # Triton asserts (aborting the process) on layouts it does not accept; check its two rules
        # here for a clear message: register and lane bases move along one dim at most, and the
        # bases span the whole tile (surjective).
        for bases, what in ((reg, "register"), (lane, "lane")):
            for b in bases:
                if sum(1 for v in b if v) > 1:
                    raise UsageError(f"layout '{top}': {what} basis {b} moves along more than one "
                                     "dim, which Triton's linear layouts do not allow")
        if f2_rank(reg + lane + warp, shape) < sum(e.bit_length() - 1 for e in shape):
            raise UsageError(f"layout '{top}': its bases do not reach every element of the "
                             f"{shape_text(shape)} tile (Triton needs a surjective layout)")
        return self.gl.DistributedLinearLayout(
            reg_bases=[list(b) for b in reg],
            lane_bases=pad_bases(lane, LANES.bit_length() - 1, rank, "lane", top),
            warp_bases=pad_bases(warp, warps.bit_length() - 1, rank, "warp", top),
            block_bases=[], shape=list(shape))

    def _axe(self, spec, top, shape, warps):
        out = self._run_axe(spec, shape, top)
        if out.get("offset"):
            raise UsageError(f"layout '{top}': the Axe layout has an offset {out['offset']}, "
                             "which a Triton layout cannot express")
        axes = out.get("in", {})
        unknown = set(axes) - {"m", "lane", "warp"}
        if unknown:
            raise UsageError(f"layout '{top}': axes {sorted(unknown)} have no Triton counterpart "
                             "(expected m, lane, warp)")
        return self._linear(axes.get("m", []), axes.get("lane", []), axes.get("warp", []), [],
                            shape, warps, top)

    def _run_axe(self, spec, shape, top):
        cmd = [self._axe_binary(), "linear", spec, "--json"]
        if shape is not None:
            cmd += ["--shape", ",".join(str(e) for e in shape)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except OSError as e:
            raise EnvError(f"cannot run the axe CLI ({cmd[0]}): {e}")
        try:
            out = json.loads(proc.stdout)
        except json.JSONDecodeError:
            out = {"error": (proc.stderr or proc.stdout).strip()}
        if proc.returncode != 0 or "error" in out:
            raise UsageError(f"layout '{top}': not a known thread layout (blocked:, mma:, "
                             f"wgmma:, slice:, linear:) and axe rejects it as an Axe layout: "
                             f"{out.get('error', proc.stderr.strip())}")
        return out

    def _axe_binary(self):
        if self.axe_path:
            return self.axe_path
        found = shutil.which("axe")
        if found:
            return found
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        built = os.path.join(repo, "build", "bin", "axe")
        if os.access(built, os.X_OK):
            return built
        raise EnvError("Axe layout specs need the axe CLI: pass --axe PATH, put axe on PATH, or "
                       f"build it ({built})")

    def _check_warps(self, wpc, warps, top):
        if math.prod(wpc) != warps:
            raise UsageError(f"layout '{top}': warps_per_cta {wpc} has {math.prod(wpc)} warps, "
                             f"but --warps is {warps}")

    def _nvmma(self):
        cls = getattr(self.gl, "NVMMADistributedLayout", None)
        if cls is None:
            raise EnvError("this Triton's gluon.language has no NVMMADistributedLayout")
        return cls


# ---------------------------------------------------------------------------------------------
# The kernels: module-level @gluon.jit functions (the usual form, whatever the Triton version).
# Without Triton the script still parses its arguments and reports the missing import.
# ---------------------------------------------------------------------------------------------

try:
    import triton
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    _TRITON_IMPORT_ERROR = None
except ImportError as _e:  # reported by import_triton() when a layout or kernel is needed
    triton = gluon = gl = None
    _TRITON_IMPORT_ERROR = _e

if gluon is not None:
    # op_arg and iters are never specialised, so the same compiled kernel serves ITERS = 0 and
    # ITERS = N (Triton would otherwise specialise 1 as a constant and 0 as divisible by 16).

    @gluon.jit(do_not_specialize=["op_arg", "iters"])
    def round_trip_1d(in_ptr, out_ptr, op_arg, iters, M: gl.constexpr, A: gl.constexpr,
                      B: gl.constexpr, IS_FLOAT: gl.constexpr):
        offs = gl.arange(0, M, layout=A)
        x = gl.load(in_ptr + offs)
        k = op_arg.to(in_ptr.dtype.element_ty)  # 1.0 or 0 in the tile's dtype (no promotion)
        for _ in range(iters):
            y = gl.convert_layout(x, B)
            if IS_FLOAT:
                y = y * k
            else:
                y = y ^ k
            x = gl.convert_layout(y, A)
            if IS_FLOAT:
                x = x * k
            else:
                x = x ^ k
        gl.store(out_ptr + offs, x)

    @gluon.jit(do_not_specialize=["op_arg", "iters"])
    def round_trip_2d(in_ptr, out_ptr, op_arg, iters, M: gl.constexpr, N: gl.constexpr,
                      A: gl.constexpr, B: gl.constexpr, IS_FLOAT: gl.constexpr):
        rows = gl.arange(0, M, layout=gl.SliceLayout(1, A))
        cols = gl.arange(0, N, layout=gl.SliceLayout(0, A))
        offs = gl.expand_dims(rows, 1) * N + gl.expand_dims(cols, 0)  # row-major, layout A
        x = gl.load(in_ptr + offs)
        k = op_arg.to(in_ptr.dtype.element_ty)
        for _ in range(iters):
            y = gl.convert_layout(x, B)
            if IS_FLOAT:
                y = y * k
            else:
                y = y ^ k
            x = gl.convert_layout(y, A)
            if IS_FLOAT:
                x = x * k
            else:
                x = x ^ k
        gl.store(out_ptr + offs, x)


def import_triton():
    """(triton, gluon, gl), or EnvError naming what is missing."""
    if _TRITON_IMPORT_ERROR is not None:
        raise EnvError("needs triton >= 3.4 with triton.experimental.gluon "
                       f"({_TRITON_IMPORT_ERROR})")
    return triton, gluon, gl


def make_kernels(gluon, gl):
    """The rank-1 and rank-2 round-trip kernels (indexed by rank - 1)."""
    return round_trip_1d, round_trip_2d


def mechanism_of(asm_text):
    """What a compiled kernel's PTX uses to move data between threads."""
    parts = []
    if "st.shared" in asm_text or "ld.shared" in asm_text or "stmatrix" in asm_text \
            or "ldmatrix" in asm_text:
        parts.append("shared")
    if "shfl.sync" in asm_text:
        parts.append("shfl")
    return "triton:" + ("+".join(parts) if parts else "registers")


class Case:
    """One benchmark case, parsed and with its Gluon layouts built."""

    def __init__(self, factory, src, dst, shape, dtype, warps):
        if dtype not in DTYPES:
            raise UsageError(f"--dtype '{dtype}': expected one of {', '.join(DTYPES)}")
        if not is_pow2(warps) or warps > 32:
            raise UsageError(f"--warps {warps}: expected a power of two in 1..32")
        self.src, self.dst, self.dtype, self.warps = src, dst, dtype, warps
        self.shape = parse_shape(shape) if isinstance(shape, str) else list(shape)
        self.A = factory.build(src, self.shape, warps)
        self.B = factory.build(dst, self.shape, warps)
        self.is_float = DTYPES[dtype][3]

    def label(self):
        return f"{shape_text(self.shape)} {self.dtype} {self.src}->{self.dst}"

    def constexprs(self):
        """The kernel's constexpr arguments, by name."""
        c = {"M": self.shape[0], "A": self.A, "B": self.B, "IS_FLOAT": self.is_float}
        if len(self.shape) == 2:
            c["N"] = self.shape[1]
        return c

    def result(self, **fields):
        out = {"from": self.src, "to": self.dst, "shape": shape_text(self.shape),
               "dtype": self.dtype, "warps": self.warps}
        out.update(fields)
        return out


# ---------------------------------------------------------------------------------------------
# Compile only (no GPU): triton.compile with an explicit target.
# ---------------------------------------------------------------------------------------------

def compile_case(case, kernels, triton, arch):
    from triton.backends.compiler import GPUTarget
    try:
        from triton.experimental.gluon._runtime import GluonASTSource
    except ImportError as e:
        raise EnvError(f"this Triton has no GluonASTSource to compile without a GPU ({e})")
    kernel = kernels[len(case.shape) - 1]
    ptr = "*" + DTYPES[case.dtype][0]
    signature = {"in_ptr": ptr, "out_ptr": ptr, "op_arg": "fp32" if case.is_float else "i32",
                 "iters": "i32"}
    constexprs = case.constexprs()
    for name in constexprs:
        signature[name] = "constexpr"
    # Keep the launch-time signature order (the kernel's argument order).
    signature = {name: signature[name] for name in kernel.arg_names}
    src = GluonASTSource(kernel, signature, constexprs)
    compiled = triton.compile(src, target=GPUTarget("cuda", arch, LANES),
                              options={"num_warps": case.warps})
    return compiled


def run_compile_only(cases, args):
    triton, gluon, gl = import_triton()
    kernels = make_kernels(gluon, gl)
    results, failed = [], False
    for case in cases:
        try:
            compiled = compile_case(case, kernels, triton, args.arch)
            shared = int(getattr(compiled.metadata, "shared", 0))
            results.append(case.result(compiled=True, mechanism=mechanism_of(compiled.asm["ptx"]),
                                       shared_bytes=shared, arch=args.arch,
                                       triton_version=triton.__version__))
        except (UsageError, EnvError):
            raise
        except Exception as e:  # a compile error: report it, go on with the other cases
            failed = True
            msg = str(e).strip().splitlines()
            results.append(case.result(compiled=False, error=msg[-1] if msg else type(e).__name__,
                                       arch=args.arch, triton_version=triton.__version__))
    if args.json:
        print(json.dumps(results if args.cases else results[0]))
    else:
        for r in results:
            state = (f"compiles for sm_{r['arch']}, {r['mechanism']}, {r['shared_bytes']} B shared"
                     if r["compiled"] else f"DOES NOT COMPILE: {r['error']}")
            print(f"gluon {r['shape']} {r['dtype']} {r['from']}->{r['to']}: {state}")
    return EXIT_ENV if failed else 0


# ---------------------------------------------------------------------------------------------
# On the GPU.
# ---------------------------------------------------------------------------------------------

def torch_dtype(torch, name):
    _, preferred, fallback, _ = DTYPES[name]
    dt = getattr(torch, preferred, None)
    if dt is None:
        dt = getattr(torch, fallback)
    return dt


def random_tile(torch, case, dt):
    n = math.prod(case.shape)
    if case.is_float:
        return torch.randn(n, device="cuda", dtype=torch.float32).to(dt)
    # Integers: random bytes, viewed as the dtype (covers every width, signed or not).
    nbytes = n * torch.empty((), dtype=dt).element_size()
    raw = torch.randint(0, 256, (nbytes,), device="cuda", dtype=torch.uint8)
    return raw.view(dt)


def run_case(case, kernels, torch, triton, iters, launches):
    dt = torch_dtype(torch, case.dtype)
    kernel = kernels[len(case.shape) - 1]
    x = random_tile(torch, case, dt)
    out = torch.empty_like(x)
    op_arg = 1.0 if case.is_float else 0
    constexprs = case.constexprs()

    def launch(n):
        return kernel[(1,)](x, out, op_arg, n, num_warps=case.warps, **constexprs)

    # Correctness (and compilation): ITERS = N, then ITERS = 0; bit-exact against the input.
    correct, compiled = True, {}
    for n in (iters, 0):
        out.view(torch.uint8).fill_(0xA5)
        compiled[n] = launch(n)
        torch.cuda.synchronize()
        correct &= bool(torch.equal(out.view(torch.uint8), x.view(torch.uint8)))
    if compiled[iters] is not compiled[0]:
        print(f"tile_bench_gluon: warning: {case.label()}: ITERS={iters} and ITERS=0 did not run "
              "the same compiled kernel", file=sys.stderr)

    # Warm-up, then K launches of each of ITERS = N and ITERS = 0, interleaved, each between two
    # CUDA events. The host enqueues slower than short kernels run, so a sleep kernel ahead of
    # every chunk keeps the GPU busy while the chunk is enqueued: an event pair then brackets the
    # kernel alone, not the host's launch latency.
    for _ in range(10):
        launch(iters)
        launch(0)
    torch.cuda.synchronize()
    sleep = getattr(torch.cuda, "_sleep", None)
    ev = {n: ([torch.cuda.Event(enable_timing=True) for _ in range(launches)],
              [torch.cuda.Event(enable_timing=True) for _ in range(launches)]) for n in (iters, 0)}
    for i in range(launches):
        if sleep is not None and i % 10 == 0:
            sleep(10_000_000)  # ~5 ms at 2 GHz: longer than enqueuing 20 launches
        for n in (iters, 0):
            ev[n][0][i].record()
            launch(n)
            ev[n][1][i].record()
        if i % 10 == 9:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    med = {n: statistics.median(s.elapsed_time(e) * 1e6 for s, e in zip(*ev[n]))
           for n in (iters, 0)}
    ns = (med[iters] - med[0]) / iters if iters else 0.0
    mechanism, shared = "triton", None
    try:
        mechanism = mechanism_of(compiled[iters].asm["ptx"])
        shared = int(getattr(compiled[iters].metadata, "shared", 0))
    except Exception:  # older launchers may not return the compiled kernel
        pass
    return case.result(ns_per_round_trip=round(ns, 2), correct=correct, mechanism=mechanism,
                       iters=iters, launches=launches, median_ns_iters=round(med[iters], 1),
                       median_ns_zero=round(med[0], 1), shared_bytes=shared,
                       gpu=torch.cuda.get_device_name(), triton_version=triton.__version__)


def human_line(r):
    state = "correct" if r["correct"] else "INCORRECT"
    return (f"gluon {r['shape']} {r['dtype']} {r['from']}->{r['to']}: "
            f"{r['ns_per_round_trip']:.1f} ns per round trip ({state})")


def run_on_gpu(cases, args, references):
    triton, gluon, gl = import_triton()
    try:
        import torch
    except ImportError as e:
        raise EnvError(f"needs torch ({e})")
    if not torch.cuda.is_available():
        raise EnvError("no CUDA GPU visible to torch (use --compile-only to only compile)")
    kernels = make_kernels(gluon, gl)
    results = []
    for case in cases:
        try:
            results.append(run_case(case, kernels, torch, triton, args.iters, args.launches))
        except (UsageError, EnvError):
            raise
        except Exception as e:
            if not args.cases:
                raise EnvError(f"{case.label()}: {type(e).__name__}: {e}")
            msg = str(e).strip().splitlines()
            results.append(case.result(ns_per_round_trip=None, correct=False, mechanism="triton",
                                       error=msg[-1] if msg else type(e).__name__))
    if args.json:
        print(json.dumps(results if args.cases else results[0]))
    elif args.cases:
        print(f"{'case':<72} {'ns/rt':>9} {'issue':>6}  correct  mechanism")
        for r, ref in zip(results, references):
            ns = "error" if r["ns_per_round_trip"] is None else f"{r['ns_per_round_trip']:.1f}"
            label = f"{r['shape']} {r['dtype']} w{r['warps']} {r['from']}->{r['to']}"
            print(f"{label:<72} {ns:>9} {ref:>6}  {str(r['correct']):<7}  "
                  f"{r.get('error', r['mechanism'])}")
    else:
        print(human_line(results[0]))
    return 0 if all(r["correct"] for r in results) else EXIT_WRONG


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Triton Gluon convert_layout round trips on one CTA (tile_bench's protocol).",
        epilog="See the module docstring (head of this file) for the protocol and THREADS syntax.")
    p.add_argument("--from", dest="src", metavar="THREADS", help="layout A (load/store)")
    p.add_argument("--to", dest="dst", metavar="THREADS", help="layout B")
    p.add_argument("--shape", metavar="S", help="tile shape, e.g. 64x64 or 2048")
    p.add_argument("--dtype", metavar="T", help="one of " + " ".join(DTYPES))
    p.add_argument("--warps", type=int, metavar="W", help="warps in the CTA (num_warps)")
    p.add_argument("--iters", type=int, default=1000, metavar="N",
                   help="round trips per timed launch (default 1000)")
    p.add_argument("--launches", type=int, default=50, metavar="K",
                   help="timed launches of each of ITERS=N and ITERS=0 (default 50, at least 50)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a human line")
    p.add_argument("--axe", metavar="PATH", help="the axe CLI, for Axe layout specs")
    p.add_argument("--cases", action="store_true", help="run the built-in list of cases")
    p.add_argument("--compile-only", action="store_true",
                   help="only compile (no GPU needed), for --arch")
    p.add_argument("--arch", type=int, default=90, help="compute capability for --compile-only")
    args = p.parse_args(argv)

    try:
        if args.iters < 1:
            raise UsageError("--iters must be at least 1")
        if args.launches < 50:
            raise UsageError("--launches must be at least 50")
        # Layout objects need triton; import it before parsing so a missing Triton is reported
        # as such rather than as a bad layout.
        _, _, gl = import_triton()
        factory = LayoutFactory(gl, args.axe)
        if args.cases:
            cases = [Case(factory, s, d, sh, dt, w) for s, d, sh, dt, w, _ in CASES]
            references = [ref for *_, ref in CASES]
        else:
            missing = [f for f, v in (("--from", args.src), ("--to", args.dst),
                                      ("--shape", args.shape), ("--dtype", args.dtype),
                                      ("--warps", args.warps)) if v is None]
            if missing:
                raise UsageError(f"missing {', '.join(missing)} (or use --cases)")
            cases = [Case(factory, args.src, args.dst, args.shape, args.dtype, args.warps)]
            references = [None]
        if args.compile_only:
            return run_compile_only(cases, args)
        return run_on_gpu(cases, args, references)
    except UsageError as e:
        print(f"tile_bench_gluon: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except EnvError as e:
        print(f"tile_bench_gluon: error: {e}", file=sys.stderr)
        return EXIT_ENV


if __name__ == "__main__":
    status = main()
    # Exit without interpreter teardown: after a compile, Triton's nanobind bindings print pages
    # of "leaked" reports at shutdown, which would bury the output.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
