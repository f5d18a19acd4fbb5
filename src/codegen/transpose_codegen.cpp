// The runtime's transpose as a generated tile conversion (include/axe/codegen/transpose_codegen.hpp).
#include "axe/codegen/transpose_codegen.hpp"

#include <sstream>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "codegen/global_access.hpp"

namespace axe::codegen {
namespace {

using namespace internal;

[[noreturn]] void fail(const std::string& what) { throw Error("codegen: " + what); }

// The kernel's text: the descriptor's declaration (TransposeDesc's layout), the kernel's head up
// to its tile count, and the opening of the loop over the batch (so, dof: the batch entry's
// offsets; the caller closes it).
void emit_transpose_desc(std::ostringstream& o) {
  o << "struct __align__(16) axe_transpose_desc {\n  long long A, B, sb, da, soff, doff, tiles_a, tiles_b, batch, nb;\n"
    << "  long long bext[" << kTransposeBatchModes << "], bsst[" << kTransposeBatchModes << "], bdst["
    << kTransposeBatchModes << "];\n};\n";
}

void emit_transpose_head(std::ostringstream& o, const std::string& t, std::int64_t threads, const std::string& name) {
  o << "extern \"C\" __global__ void __launch_bounds__(" << threads << ") " << name << "(const " << t
    << "* __restrict__ src, " << t << "* __restrict__ dst, axe_transpose_desc d) {\n"
    << "  extern __shared__ __align__(16) unsigned char smem[];\n"
    << "  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;\n"
    << "  const long long tiles = d.tiles_a * d.tiles_b;\n";
}

void emit_transpose_batch(std::ostringstream& o) {
  o << "  for (long long z = blockIdx.z; z < d.batch; z += gridDim.z) {\n"
    << "    long long so = d.soff, dof = d.doff, q = z;\n"
    << "    for (int m = (int)d.nb - 1; m >= 0; --m) {\n"
    << "      const long long i = q % d.bext[m];\n      q /= d.bext[m];\n"
    << "      so += i * d.bsst[m];\n      dof += i * d.bdst[m];\n    }\n";
}

}  // namespace

std::string_view to_string(TransposeAccess a) {
  switch (a) {
    case TransposeAccess::vectors: return "vectors";
    case TransposeAccess::realigned: return "realigned";
    case TransposeAccess::scalar: return "scalar";
  }
  return "?";
}

TransposeTile default_transpose_tile(std::int64_t element_bytes, TransposeAccess access) {
  // The fastest tiles (b x a, warps) in kernel_bench on one H100 (% of device memcpy). Vectors
  // (the defaults until 2026-11-28, superseded by the H200 figures at the end; 2026-11-27, of up
  // to 14 tiles on 8192^2 f32, 8192^2 f16, 4096^2 f64, 16384^2 u8, with the 4-byte squares):
  // 4 bytes 128 x 128 w4 96.2% (64 x 64 w4 91.2%, 32 x 64 w4 92.9%), 2 bytes 128 x 128 w4 95.3%
  // (64 x 64 w4 92.8%), 1 byte 64 x 128 w4 93.1% (128 x 64 w4 91.8%), 8 bytes 32 x 64 w4 100.2%
  // (32 x 32 w4 97.7%). On one H200 (2026-11-28, the same 17 tiles;
  // examples/results/1xH200/unaligned_2026-11-28/) 4 bytes 128 x 128 w4 ran at 87.9% and 128 x 64
  // w4 at 93.5% (95.6-95.7% on the H100), so 4-byte elements took 128 x 64. (There 2 bytes 128 x
  // 128 w4 stayed the best, 91.7%; 1 byte 128 x 128 w4 79.3%, 64 x 128 w4 79.1%, no tile above 80%.)
  // Aligned rows (vectors) walk along b first as well since 2026-11-28 (below).
  // Unaligned rows (2026-11-28, 8 tiles of each access and order on R x 16383 at offset 1, 256
  // MiB: every row of both sides at its own shift, DRAM-bound; examples/results/1xH100/
  // transposes_2026-11-28/): walked along b first, so that the sectors two tiles share at a
  // destination row's cut are written by CTAs running side by side, 45 of 48 tile and access
  // pairs were faster, by up to 23 points, the other three within 1 (scalar 4 bytes 128 x 32 w4
  // 93.9% against 80.9% along a first, 8 bytes 64 x 64 w8 96.0% against 85.2% (the best along a:
  // 256 x 32 w8 88.1%), 2 bytes 128 x 128 w8 85.0% against 67.5%, 1 byte 256 x 32 w8 67.5%
  // against 60.8%; realigned 4 bytes 128 x 32 w8 87.2%, 8 bytes 64 x 64 w8 85.3%, 2 bytes
  // 128 x 32 w4 80.3%, 1 byte 256 x 64 w8 56.2%).
  if (access == TransposeAccess::scalar) {
    if (element_bytes == 4) return {32, 128, 4, true};
    if (element_bytes == 1) return {32, 256, 8, true};
    return element_bytes == 8 ? TransposeTile{64, 64, 8, true} : TransposeTile{128, 128, 8, true};
  }
  if (access == TransposeAccess::realigned) {
    if (element_bytes == 1) return {64, 256, 8, true};
    if (element_bytes == 4) return {32, 128, 8, true};
    return element_bytes == 2 ? TransposeTile{32, 128, 4, true} : TransposeTile{64, 64, 8, true};
  }
  // Vectors on one H200, 2026-11-28, launch time excluded, ms on the square / on 4096 x 65536
  // (fewer rows for wider types), Triton in the same call (examples/results/1xH200/):
  // - 1 byte, packed registers (packed_2026-11-28/): 128 x 128 w4 0.1456 / 0.1491 against 0.1607 /
  //   0.1670 for 64 x 128 w4 unpacked (the default before); packed 2 bytes within 1% of unpacked.
  // - Along b first (wide_tiles_2026-11-28/, call 3; Triton 0.1341 / 0.1342 for 4 bytes, 0.0701 /
  //   0.1346 for 8, 0.1429 / 0.1426 for 1): 4 bytes 64 x 64 w4 with 8-byte vectors 0.1322 / 0.1337
  //   against 0.1353 / 0.1366 along a; 8 bytes 64 x 32 w4 0.0678 / 0.1319 against 0.0711 / 0.1392
  //   for 32 x 64 w4 along a (the default before); 1 byte 128 x 128 w8 packed 0.1390 / 0.1365
  //   against 0.1453 / 0.1502 along a. Call 2: 2 bytes 64 x 128 w4 along b first 0.0703 / 0.1414
  //   against 0.0736 / 0.1442 for 128 x 128 w4 along a (Triton 0.0700 / 0.1374). So aligned rows
  //   walk along b first too: consecutive CTAs write consecutive pieces of the same destination
  //   rows.
  if (element_bytes == 8) return {32, 64, 4, true};
  if (element_bytes == 1) return {128, 128, 8, true, 16, true};
  return element_bytes == 4 ? TransposeTile{64, 64, 4, true, 8} : TransposeTile{128, 64, 4, true};
}

TransposeAccess unaligned_transpose_access(std::int64_t element_bytes) {
  // The same runs (the tiles above, along b first): one element per access was faster than
  // realigned words for every element size (4 bytes 93.9% against 87.2%, 8 bytes 96.0% against
  // 85.3%, 2 bytes 85.0% against 80.3%, 1 byte 67.5% against 56.2%): the words' shifts, shuffles
  // and pieces at the rows' ends cost more than the accesses they save. (Along a first, on a
  // 3001 x 5003 box within the L2, realigned words had won for 2- and 8-byte elements.)
  (void)element_bytes;
  return TransposeAccess::scalar;
}

TransposeTile fit_transpose_tile(const Element& element, TransposeTile tile, TransposeAccess access,
                                 std::int64_t shared_limit) {
  const TransposeTile first = tile;
  for (;;) {
    bool valid = true;
    try {
      if (transpose_kernel(element, tile, access).shared_bytes <= shared_limit) return tile;
    } catch (const Error&) {  // too small for its warps (or too wide to realign): fewer warps
      valid = false;
    }
    if (!valid && tile.warps > 1) {
      tile.warps /= 2;
    } else if (tile.a >= tile.b && tile.a > 1) {
      tile.a /= 2;
    } else if (tile.b > 1) {
      tile.b /= 2;
    } else {
      fail("no transpose tile of " + std::to_string(element.bytes) + "-byte elements with " +
           std::string(to_string(access)) + " accesses fits " + std::to_string(shared_limit) +
           " bytes of shared memory (tried down from " + std::to_string(first.b) + "x" + std::to_string(first.a) +
           " with " + std::to_string(first.warps) + " warps)");
    }
  }
}

TransposeKernel transpose_kernel(const Element& element, const TransposeTile& tile, TransposeAccess access) {
  const std::int64_t es = element.bytes;
  for (std::int64_t e : {tile.a, tile.b, tile.warps}) {
    if (e <= 0 || (e & (e - 1))) fail("transpose tile extents and warps must be powers of two");
  }
  TransposeKernel k;
  k.tile = tile;
  k.access = access;
  const std::int64_t vb = tile.vector_bytes;
  if (access == TransposeAccess::vectors && (vb < 4 || vb > 16 || (vb & (vb - 1)) || vb < es)) {
    fail("transpose vectors of " + std::to_string(vb) + " bytes: 4, 8 or 16 bytes, and at least an element (" +
         std::to_string(es) + " bytes)");
  }
  const bool vectors = access != TransposeAccess::scalar;
  k.vector = vectors ? (access == TransposeAccess::vectors ? vb : 16) / es : 1;
  k.block = vectors && es < 4 ? 4 / es : 1;
  k.threads = 32 * tile.warps;
  const std::int64_t v = k.vector, blk = k.block;
  // Lanes along each side's contiguous coordinate, then along the other one; warps along the other.
  const std::int64_t la = std::min<std::int64_t>(32, tile.a / v);
  const std::int64_t lb = std::min<std::int64_t>(32, tile.b / v);
  const auto too_small = [&] {
    fail("a " + std::to_string(tile.b) + "x" + std::to_string(tile.a) + " tile is too small for " +
         std::to_string(tile.warps) + " warps of " + std::to_string(blk) + "x" + std::to_string(v) +
         "-element squares");
  };
  if (tile.a < v * blk || tile.b < v * blk || la == 0 || lb == 0) too_small();
  if (blk * (32 / la) * tile.warps > tile.b || blk * (32 / lb) * tile.warps > tile.a) too_small();
  if (access == TransposeAccess::realigned && (tile.a > 32 * v || tile.b > 32 * v)) {
    fail("a realigned " + std::to_string(tile.b) + "x" + std::to_string(tile.a) + " tile has more than 32 " +
         std::to_string(v) + "-element vectors across a side");
  }
  const std::vector<std::int64_t> shape{tile.b, tile.a};
  // Source: V consecutive a (by blk rows of b) per thread, lanes along a first, warps along b.
  const std::vector<std::int64_t> s_spt{blk, v}, s_tpw{32 / la, la}, s_wpc{tile.warps, 1}, s_order{1, 0};
  // Destination: V consecutive b (by blk columns of a) per thread, lanes along b first, warps along a.
  const std::vector<std::int64_t> d_spt{v, blk}, d_tpw{lb, 32 / lb}, d_wpc{1, tile.warps}, d_order{0, 1};
  const AxeLayout from = linear::from_linear(linear::blocked_layout(shape, s_spt, s_tpw, s_wpc, s_order)).layout;
  const AxeLayout to = linear::from_linear(linear::blocked_layout(shape, d_spt, d_tpw, d_wpc, d_order)).layout;
  linear::ConvertOptions opts;
  opts.element_bytes = es;
  opts.shared_budget_bytes = tile.a * tile.b * es;  // one repetition
  k.plan = linear::plan_conversion(from, to, shape, opts);
  if (tile.packed && (es >= 4 || access != TransposeAccess::vectors || !packable(k.plan, es))) {
    fail("packed registers take vectors of 1- or 2-byte elements whose conversion packable() takes (" +
         std::to_string(es) + "-byte elements, " + std::string(to_string(access)) + ")");
  }
  k.packed = tile.packed;
  const ThreadColumns cf = thread_columns(from, shape), ct = thread_columns(to, shape);
  const Coords src = coords_of(cf, tile.a, true), dst = coords_of(ct, tile.a, false);
  const std::int64_t buffer = (k.plan.counts.shared_bytes + 15) / 16 * 16;
  k.shared_bytes = 2 * buffer;
  const std::string t(element_type(es));

  std::ostringstream o;
  o << "// Generated by axe (codegen/transpose_codegen): " << tile.b << "x" << tile.a << " tiles of "
    << es << "-byte elements, " << tile.warps << " warps, " << (tile.b_first ? "along b first, " : "")
    << to_string(access) << ", " << blk << "x" << v
    << " per thread; "
    << to_string(from) << " -> " << to_string(to) << " (" << linear::to_string(k.plan.mechanism) << ").\n";
  emit_transpose_desc(o);
  const bool realigned = access == TransposeAccess::realigned;
  if (realigned) o << "#define AXE_ES " << es << "\n" << kRealignHelpers;
  // Packed: elements under 4 bytes sit 4 / size to a 32-bit register.
  const std::string rt = k.packed ? "unsigned" : t;
  const std::int64_t per = k.packed ? 4 / es : 1;
  auto fn = [&](const char* name, bool load, bool edge, const Coords& c, std::int64_t regs, std::int64_t group) {
    o << "__device__ __forceinline__ void " << name << "(" << (load ? "" : "const ") << rt << " (&r)[" << regs / per
      << "], " << (load ? "const " : "") << t << "* __restrict__ p, long long stride"
      << (edge ? ", long long xlim, long long ylim" : "") << (realigned && load && !edge ? ", bool interior" : "")
      << ", unsigned lane, unsigned warp) {\n";
    if (realigned && !edge) emit_realigned(o, load, t, c, regs, v, group);
    else emit_access(o, load, t, c, regs, v, edge, k.packed);
    o << "}\n";
  };
  fn("axe_load_full", true, false, src, cf.registers(), la);
  fn("axe_load_edge", true, true, src, cf.registers(), la);
  fn("axe_store_full", false, false, dst, ct.registers(), lb);
  fn("axe_store_edge", false, true, dst, ct.registers(), lb);
  o << emit_conversion(k.plan, shape, es, "axe_convert", k.packed);
  emit_transpose_head(o, t, k.threads, k.name);
  o << "  unsigned parity = 0;\n";
  emit_transpose_batch(o);
  o << "    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {\n"
    << (tile.b_first
            ? "      const long long a0 = (t / d.tiles_b) * " + std::to_string(tile.a) + "ll, b0 = (t % d.tiles_b) * " +
                  std::to_string(tile.b) + "ll;\n"
            : "      const long long a0 = (t % d.tiles_a) * " + std::to_string(tile.a) + "ll, b0 = (t / d.tiles_a) * " +
                  std::to_string(tile.b) + "ll;\n")
    << "      const bool full = a0 + " << tile.a << "ll <= d.A && b0 + " << tile.b << "ll <= d.B;\n"
    << "      " << rt << " r[" << cf.registers() / per << "], w[" << ct.registers() / per << "];\n"
    << "      const " << t << "* s = src + so + a0 + b0 * d.sb;\n"
    << "      " << t << "* o = dst + dof + a0 * d.da + b0;\n"
    << "      if (full) axe_load_full(r, s, d.sb, "
    << (realigned ? "a0 > 0 && a0 + " + std::to_string(tile.a + v) + "ll <= d.A, " : std::string()) << "lane, warp);\n"
    << "      else axe_load_edge(r, s, d.sb, d.A - a0, d.B - b0, lane, warp);\n"
    << "      axe_convert(r, w, smem + (parity ? " << buffer << "u : 0u), lane, warp);\n"
    << "      parity ^= 1u;\n"
    << "      if (full) axe_store_full(w, o, d.da, lane, warp);\n"
    << "      else axe_store_edge(w, o, d.da, d.B - b0, d.A - a0, lane, warp);\n"
    << "    }\n  }\n}\n";
  k.source = o.str();
  return k;
}

}  // namespace axe::codegen
