// The runtime's transpose as a generated tile conversion (include/axe/codegen/transpose_codegen.hpp).
#include "axe/codegen/transpose_codegen.hpp"

#include <bit>
#include <sstream>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/thread_layouts.hpp"

namespace axe::codegen {
namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("codegen: " + what); }

int log2_of(std::int64_t v) { return std::countr_zero(static_cast<std::uint64_t>(v)); }

// The columns of a thread layout split into the tile's two coordinates: for each hardware bit,
// (contiguous coordinate, other coordinate). Blocked layouts hold one tile bit per column.
struct Split {
  std::vector<std::int64_t> x, y;
};
struct Coords {
  Split m, lane, warp;
};

// `contiguous_is_a`: the global side's contiguous coordinate is a (the source) or b (the
// destination). Tile index c = b * tile_a + a.
Coords coords_of(const ThreadColumns& c, std::int64_t tile_a, bool contiguous_is_a) {
  const int ab = log2_of(tile_a);
  auto split = [&](const std::vector<std::uint64_t>& cols) {
    Split s;
    for (auto v : cols) {
      const auto a = static_cast<std::int64_t>(v & static_cast<std::uint64_t>(tile_a - 1));
      const auto b = static_cast<std::int64_t>(v >> ab);
      s.x.push_back(contiguous_is_a ? a : b);
      s.y.push_back(contiguous_is_a ? b : a);
    }
    return s;
  };
  return {split(c.m), split(c.lane), split(c.warp)};
}

std::int64_t sum_of(const std::vector<std::int64_t>& cols, std::uint64_t bits) {
  std::int64_t s = 0;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    if (bits >> k & 1) s += cols[k];
  }
  return s;
}

// The per-thread coordinates (x, y) of a layout: sums of the lane and warp parts.
void thread_terms(std::ostringstream& o, const Coords& c, const char* x, const char* y) {
  auto term = [&](const char* v, const std::vector<std::int64_t>& lane, const std::vector<std::int64_t>& warp) {
    o << "  const long long " << v << " = 0";
    for (std::size_t k = 0; k < lane.size(); ++k) {
      if (lane[k]) o << " + ((lane >> " << k << " & 1u) ? " << lane[k] << "ll : 0ll)";
    }
    for (std::size_t k = 0; k < warp.size(); ++k) {
      if (warp[k]) o << " + ((warp >> " << k << " & 1u) ? " << warp[k] << "ll : 0ll)";
    }
    o << ";\n";
  };
  term(x, c.lane.x, c.warp.x);
  term(y, c.lane.y, c.warp.y);
}

// Loads (stores) registers `regs` of a layout with coordinates `c` at p[x + y * stride]:
//   full: every element in range, V-element vectors along x (the V registers of bits
//         0..log2 V - 1, which hold x, x+1, ... in order: blocked [.., V]);
//   edge: x < xlim and y < ylim per element, scalar.
void emit_access(std::ostringstream& o, bool load, const std::string& t, const Coords& c,
                 std::int64_t registers, std::int64_t vector, bool edge) {
  thread_terms(o, c, "tx", "ty");
  if (!edge) o << "  const long long base = tx + ty * stride;\n";
  const std::int64_t v = edge ? 1 : vector;
  const std::int64_t vbytes = v * static_cast<std::int64_t>(t == "unsigned char" ? 1 : t == "unsigned short" ? 2 : t == "unsigned int" ? 4 : 8);
  const char* vt = vbytes == 16 ? "uint4" : vbytes == 8 ? "uint2" : nullptr;
  for (std::int64_t r = 0; r < registers; r += v) {
    const auto ur = static_cast<std::uint64_t>(r);
    const std::int64_t x = sum_of(c.m.x, ur), y = sum_of(c.m.y, ur);
    const std::string at = "(" + std::to_string(x) + "ll + " + std::to_string(y) + "ll * stride)";
    if (edge) {
      const std::string in = "tx + " + std::to_string(x) + "ll < xlim && ty + " + std::to_string(y) + "ll < ylim";
      if (load) {
        o << "  r[" << r << "] = (" << in << ") ? p[tx + ty * stride + " << at << "] : (" << t << ")0;\n";
      } else {
        o << "  if (" << in << ") p[tx + ty * stride + " << at << "] = r[" << r << "];\n";
      }
      continue;
    }
    if (v == 1) {
      if (load) o << "  r[" << r << "] = p[base + " << at << "];\n";
      else o << "  p[base + " << at << "] = r[" << r << "];\n";
      continue;
    }
    const std::string vtype = vt ? vt : (vbytes == 4 ? "unsigned int" : "unsigned short");
    o << "  {\n    union { " << vtype << " v; " << t << " e[" << v << "]; } u;\n";
    if (load) {
      o << "    u.v = *reinterpret_cast<const " << vtype << "*>(p + base + " << at << ");\n";
      for (std::int64_t i = 0; i < v; ++i) o << "    r[" << r + i << "] = u.e[" << i << "];\n";
    } else {
      for (std::int64_t i = 0; i < v; ++i) o << "    u.e[" << i << "] = r[" << r + i << "];\n";
      o << "    *reinterpret_cast<" << vtype << "*>(p + base + " << at << ") = u.v;\n";
    }
    o << "  }\n";
  }
}

// Device helpers of the realigned access (TransposeAccess::realigned), ES the element size: the
// head [sh, 16) or the tail [0, sh) of an aligned 16-byte word read or written in naturally
// aligned pieces (sh a multiple of ES, so no piece is smaller than an element; the head's pieces
// grow from sh, the tail's shrink from 0), a 32-byte funnel shift, and whole-word shuffles. The
// pieces are predicated straight-line code: every load is issued before any is used.
const char* kRealignHelpers = R"(
template <int S> struct axe_piece;
template <> struct axe_piece<1> { typedef unsigned char T; };
template <> struct axe_piece<2> { typedef unsigned short T; };
template <> struct axe_piece<4> { typedef unsigned int T; };
template <> struct axe_piece<8> { typedef unsigned long long T; };
// The byte of the head's (tail's) piece of S bytes, or 16 when it has none; sh in 1..15.
template <int S> __device__ __forceinline__ unsigned axe_head_at(unsigned sh) {
  const unsigned m = 16u - sh;  // the head's length: a piece of each of its bits, smallest first
  return S >= AXE_ES && (m & S) ? sh + (m & (S - 1u)) : 16u;
}
template <int S> __device__ __forceinline__ unsigned axe_tail_at(unsigned sh) {
  return S >= AXE_ES && (sh & S) ? sh & ~(2u * S - 1u) : 16u;
}
template <int S> __device__ __forceinline__ unsigned long long axe_get(unsigned long long w, unsigned o) {
  return o < 16u ? (unsigned long long)*reinterpret_cast<const typename axe_piece<S>::T*>(w + o) << (8 * (o & 7u))
                 : 0ull;
}
template <int S> __device__ __forceinline__ void axe_set(unsigned long long w, unsigned o, unsigned long long lo,
                                                         unsigned long long hi) {
  if (o < 16u)
    *reinterpret_cast<typename axe_piece<S>::T*>(w + o) =
        static_cast<typename axe_piece<S>::T>((o < 8u ? lo : hi) >> (8 * (o & 7u)));
}
__device__ __forceinline__ uint4 axe_join(unsigned long long lo, unsigned long long hi) {
  return make_uint4((unsigned)lo, (unsigned)(lo >> 32), (unsigned)hi, (unsigned)(hi >> 32));
}
// Bytes [b, 16) (head) or [0, b) (tail) of the word at w, the others zero.
template <bool Head> __device__ __forceinline__ uint4 axe_load_part(unsigned long long w, unsigned b) {
  const unsigned o1 = Head ? axe_head_at<1>(b) : axe_tail_at<1>(b), o2 = Head ? axe_head_at<2>(b) : axe_tail_at<2>(b),
                 o4 = Head ? axe_head_at<4>(b) : axe_tail_at<4>(b), o8 = Head ? axe_head_at<8>(b) : axe_tail_at<8>(b);
  const unsigned long long v1 = axe_get<1>(w, o1), v2 = axe_get<2>(w, o2), v4 = axe_get<4>(w, o4), v8 = axe_get<8>(w, o8);
  unsigned long long lo = 0ull, hi = 0ull;
  (o1 < 8u ? lo : hi) |= v1;
  (o2 < 8u ? lo : hi) |= v2;
  (o4 < 8u ? lo : hi) |= v4;
  (o8 < 8u ? lo : hi) |= v8;
  return axe_join(lo, hi);
}
template <bool Head> __device__ __forceinline__ void axe_store_part(unsigned long long w, unsigned b, uint4 v) {
  const unsigned long long lo = (unsigned long long)v.y << 32 | v.x, hi = (unsigned long long)v.w << 32 | v.z;
  axe_set<1>(w, Head ? axe_head_at<1>(b) : axe_tail_at<1>(b), lo, hi);
  axe_set<2>(w, Head ? axe_head_at<2>(b) : axe_tail_at<2>(b), lo, hi);
  axe_set<4>(w, Head ? axe_head_at<4>(b) : axe_tail_at<4>(b), lo, hi);
  axe_set<8>(w, Head ? axe_head_at<8>(b) : axe_tail_at<8>(b), lo, hi);
}
// Bytes k .. k + 15 (k < 16) of the 32 bytes a, b (a's byte 0 first).
__device__ __forceinline__ uint4 axe_shift16(uint4 a, uint4 b, unsigned k) {
  const unsigned q = k >> 2, r = 8 * (k & 3u);
  const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  unsigned s[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) s[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
  return make_uint4(__funnelshift_r(s[0], s[1], r), __funnelshift_r(s[1], s[2], r),
                    __funnelshift_r(s[2], s[3], r), __funnelshift_r(s[3], s[4], r));
}
__device__ __forceinline__ uint4 axe_shfl_up16(uint4 v, int width) {
  return make_uint4(__shfl_up_sync(0xffffffffu, v.x, 1, width), __shfl_up_sync(0xffffffffu, v.y, 1, width),
                    __shfl_up_sync(0xffffffffu, v.z, 1, width), __shfl_up_sync(0xffffffffu, v.w, 1, width));
}
__device__ __forceinline__ uint4 axe_ldg16(unsigned long long w) { return __ldg(reinterpret_cast<const uint4*>(w)); }
)";

// Realigned full-tile access (TransposeAccess::realigned) of registers `regs` with coordinates
// `c`: V-element vectors along x at p[base + x + y * stride], whatever their alignment. A vector
// sits at byte shift sh of the aligned word w0 and runs into w0 + 16 (rows with sh == 0 read and
// write their vectors directly).
//   load:  each lane reads both words (the neighbour along the row reads one of them too: an L1
//          hit) and funnel-shifts them. In an `interior` tile (the box holds 16 bytes more on both
//          sides of each tile row) both are whole words; else the first lane of the row's `group`
//          reads only the row's bytes of w0 and the last lane those of w0 + 16. Every vector's
//          loads are issued before the first is used.
//   store: the `group` lanes along x of one row hold consecutive vectors (lanes along x first,
//          no register repetition along x), so each lane writes w0 with the lane before's tail
//          (one shuffle) and its head; the group's first lane writes only the row's bytes of w0
//          and its last lane also the row's bytes of w0 + 16.
void emit_realigned(std::ostringstream& o, bool load, const std::string& t, const Coords& c,
                    std::int64_t registers, std::int64_t v, std::int64_t group) {
  thread_terms(o, c, "tx", "ty");
  o << "  const long long base = tx + ty * stride;\n"
    << "  const bool first = (lane & " << group - 1 << "u) == 0u, last = (lane & " << group - 1 << "u) == "
    << group - 1 << "u;\n"
    << "  const uint4 z = make_uint4(0u, 0u, 0u, 0u);\n";
  const std::int64_t n = registers / v;
  for (std::int64_t j = 0; j < n; ++j) {
    const auto ur = static_cast<std::uint64_t>(j * v);
    const std::int64_t x = sum_of(c.m.x, ur), y = sum_of(c.m.y, ur);
    const std::string J = std::to_string(j);
    o << "  const unsigned long long a" << J << " = reinterpret_cast<unsigned long long>(p + base + " << x
      << "ll + " << y << "ll * stride);\n"
      << "  const unsigned sh" << J << " = (unsigned)a" << J << " & 15u;\n"
      << "  const unsigned long long w" << J << " = a" << J << " - sh" << J << ";\n";
  }
  if (load) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      o << "  const uint4 lo" << J << " = first && !interior && sh" << J << " ? axe_load_part<true>(w" << J << ", sh"
        << J << ") : axe_ldg16(w" << J << ");\n"
        << "  const uint4 hi" << J << " = sh" << J << " == 0u ? z : last && !interior ? axe_load_part<false>(w" << J
        << " + 16, sh" << J << ") : axe_ldg16(w" << J << " + 16);\n";
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      o << "  {\n    union { uint4 v; " << t << " e[" << v << "]; } u;\n"
        << "    u.v = sh" << J << " == 0u ? lo" << J << " : axe_shift16(lo" << J << ", hi" << J << ", sh" << J << ");\n";
      for (std::int64_t i = 0; i < v; ++i) o << "    r[" << j * v + i << "] = u.e[" << i << "];\n";
      o << "  }\n";
    }
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) {
    const std::string J = std::to_string(j);
    o << "  {\n    union { uint4 v; " << t << " e[" << v << "]; } u;\n";
    for (std::int64_t i = 0; i < v; ++i) o << "    u.e[" << i << "] = r[" << j * v + i << "];\n";
    o << "    const uint4 prev = axe_shfl_up16(u.v, " << group << ");\n"
      << "    const uint4 head = sh" << J << " == 0u ? u.v : axe_shift16(prev, u.v, 16u - sh" << J << ");\n"
      << "    if (first && sh" << J << ") axe_store_part<true>(w" << J << ", sh" << J << ", head);\n"
      << "    else *reinterpret_cast<uint4*>(w" << J << ") = head;\n"
      << "    if (last && sh" << J << ") axe_store_part<false>(w" << J << " + 16, sh" << J << ", axe_shift16(u.v, z, 16u - sh"
      << J << "));\n  }\n";
  }
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
  // The fastest tiles (b x a, warps) in kernel_bench on one H100 (% of device memcpy).
  // Vectors (2026-11-27, of up to 14 tiles on 8192^2 f32, 8192^2 f16, 4096^2 f64, 16384^2 u8,
  // with the 4-byte squares): 4 bytes 128 x 128 w4 96.2% (64 x 64 w4 91.2%, 32 x 64 w4 92.9%),
  // 2 bytes 128 x 128 w4 95.3% (64 x 64 w4 92.8%), 1 byte 64 x 128 w4 93.1% (128 x 64 w4 91.8%),
  // 8 bytes 32 x 64 w4 100.2% (32 x 32 w4 97.7%).
  // Realigned (2026-11-27, 3001 x 5003 at offset 1, two runs): 2 bytes 128 x 64 w8 75.7% (64 x 64
  // w8 65.3%), 8 bytes 64 x 64 w8 82.3-85.8% (32 x 32 w4 82.7%), 4 bytes 64 x 64 w8 82.2%, 1 byte
  // 128 x 64 w4 51.5%.
  // Scalar (2026-11-25, the same box): 4 bytes 64 x 64 w8 91.1% (32 x 64 w4 75.9%), 1 byte
  // 128 x 128 w8 71.0% (64 x 64 w4 62.6%), 2 bytes 64 x 64 w4 72.2% (w8 70.2%).
  if (access == TransposeAccess::scalar) {
    if (element_bytes == 4) return {64, 64, 8};
    if (element_bytes == 1) return {128, 128, 8};
    return element_bytes == 8 ? TransposeTile{32, 32, 4} : TransposeTile{64, 64, 4};
  }
  if (access == TransposeAccess::realigned) {
    if (element_bytes == 1) return {64, 128, 4};
    return element_bytes == 2 ? TransposeTile{64, 128, 8} : TransposeTile{64, 64, 8};
  }
  if (element_bytes == 8) return {64, 32, 4};
  if (element_bytes == 1) return {128, 64, 4};
  return {128, 128, 4};
}

TransposeAccess unaligned_transpose_access(std::int64_t element_bytes) {
  // The same runs on 3001 x 5003 at offset 1 (default tiles, % of device memcpy): realigned
  // against scalar, 2 bytes 75.7% vs 73.3%, 8 bytes 82.3-85.8% vs 80.6-81.6%; but 4 bytes 82.2%
  // vs 88.3-89.7% and 1 byte 51.5% vs 67.6-70.6%, where the pieces at the row ends and the
  // shuffled stores cost more than one access per element.
  return element_bytes == 2 || element_bytes == 8 ? TransposeAccess::realigned : TransposeAccess::scalar;
}

TransposeKernel transpose_kernel(const Element& element, const TransposeTile& tile, TransposeAccess access) {
  const std::int64_t es = element.bytes;
  for (std::int64_t e : {tile.a, tile.b, tile.warps}) {
    if (e <= 0 || (e & (e - 1))) fail("transpose tile extents and warps must be powers of two");
  }
  TransposeKernel k;
  k.tile = tile;
  k.access = access;
  const bool vectors = access != TransposeAccess::scalar;
  k.vector = vectors ? 16 / es : 1;
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
  const ThreadColumns cf = thread_columns(from, shape), ct = thread_columns(to, shape);
  const Coords src = coords_of(cf, tile.a, true), dst = coords_of(ct, tile.a, false);
  const std::int64_t buffer = (k.plan.counts.shared_bytes + 15) / 16 * 16;
  k.shared_bytes = 2 * buffer;
  const std::string t(element_type(es));

  std::ostringstream o;
  o << "// Generated by axe (codegen/transpose_codegen): " << tile.b << "x" << tile.a << " tiles of "
    << es << "-byte elements, " << tile.warps << " warps, " << to_string(access) << ", " << blk << "x" << v
    << " per thread; "
    << to_string(from) << " -> " << to_string(to) << " (" << linear::to_string(k.plan.mechanism) << ").\n";
  o << "struct __align__(16) axe_transpose_desc {\n  long long A, B, sb, da, soff, doff, tiles_a, tiles_b, batch, nb;\n"
    << "  long long bext[" << kTransposeBatchModes << "], bsst[" << kTransposeBatchModes << "], bdst["
    << kTransposeBatchModes << "];\n};\n";
  const bool realigned = access == TransposeAccess::realigned;
  if (realigned) o << "#define AXE_ES " << es << "\n" << kRealignHelpers;
  auto fn = [&](const char* name, bool load, bool edge, const Coords& c, std::int64_t regs, std::int64_t group) {
    o << "__device__ __forceinline__ void " << name << "(" << (load ? "" : "const ") << t << " (&r)[" << regs
      << "], " << (load ? "const " : "") << t << "* __restrict__ p, long long stride"
      << (edge ? ", long long xlim, long long ylim" : "") << (realigned && load && !edge ? ", bool interior" : "")
      << ", unsigned lane, unsigned warp) {\n";
    if (realigned && !edge) emit_realigned(o, load, t, c, regs, v, group);
    else emit_access(o, load, t, c, regs, v, edge);
    o << "}\n";
  };
  fn("axe_load_full", true, false, src, cf.registers(), la);
  fn("axe_load_edge", true, true, src, cf.registers(), la);
  fn("axe_store_full", false, false, dst, ct.registers(), lb);
  fn("axe_store_edge", false, true, dst, ct.registers(), lb);
  o << emit_conversion(k.plan, shape, es, "axe_convert");
  o << "extern \"C\" __global__ void __launch_bounds__(" << k.threads << ") " << k.name << "(const " << t
    << "* __restrict__ src, " << t << "* __restrict__ dst, axe_transpose_desc d) {\n"
    << "  extern __shared__ __align__(16) unsigned char smem[];\n"
    << "  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;\n"
    << "  const long long tiles = d.tiles_a * d.tiles_b;\n"
    << "  unsigned parity = 0;\n"
    << "  for (long long z = blockIdx.z; z < d.batch; z += gridDim.z) {\n"
    << "    long long so = d.soff, dof = d.doff, q = z;\n"
    << "    for (int m = (int)d.nb - 1; m >= 0; --m) {\n"
    << "      const long long i = q % d.bext[m];\n      q /= d.bext[m];\n"
    << "      so += i * d.bsst[m];\n      dof += i * d.bdst[m];\n    }\n"
    << "    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {\n"
    << "      const long long a0 = (t % d.tiles_a) * " << tile.a << "ll, b0 = (t / d.tiles_a) * " << tile.b << "ll;\n"
    << "      const bool full = a0 + " << tile.a << "ll <= d.A && b0 + " << tile.b << "ll <= d.B;\n"
    << "      " << t << " r[" << cf.registers() << "], w[" << ct.registers() << "];\n"
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
