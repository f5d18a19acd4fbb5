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

}  // namespace

TransposeTile default_transpose_tile(std::int64_t element_bytes, bool vectors) {
  // The fastest tiles in kernel_bench on one H100 (2026-11-25; % of device memcpy). Vectors, of 8
  // tiles per element size on 8192^2 f32, 8192^2 f16, 16384^2 u8: 4 bytes 32 x 32 or 32 x 64 with
  // 4 warps 93.1-93.9% (64 x 64 w8 87.9%), 2 bytes 64 x 64 w4 93.5-94.8% (w8 77.2%), 1 byte
  // 64 x 64 w4 85.8-86.1% (128 x 128 w8 79.6%); 8 bytes 32 x 32 w4 98.0%. Scalar (3001 x 5003 at
  // offset 1): 4 bytes 64 x 64 w8 91.1% (32 x 64 w4 75.9%), 1 byte 128 x 128 w8 71.0% (64 x 64
  // w4 62.6%), 2 bytes 64 x 64 w4 72.2% (w8 70.2%).
  if (element_bytes == 8) return {32, 32, 4};
  if (element_bytes == 4) return vectors ? TransposeTile{64, 32, 4} : TransposeTile{64, 64, 8};
  if (element_bytes == 1 && !vectors) return {128, 128, 8};
  return {64, 64, 4};
}

TransposeKernel transpose_kernel(const Element& element, const TransposeTile& tile, bool vectors) {
  const std::int64_t es = element.bytes;
  for (std::int64_t e : {tile.a, tile.b, tile.warps}) {
    if (e <= 0 || (e & (e - 1))) fail("transpose tile extents and warps must be powers of two");
  }
  TransposeKernel k;
  k.tile = tile;
  k.vector = vectors ? 16 / es : 1;
  k.threads = 32 * tile.warps;
  const std::int64_t v = k.vector;
  if (tile.a < v || tile.b < v || tile.a * tile.b < k.threads * v) {
    fail("a " + std::to_string(tile.b) + "x" + std::to_string(tile.a) + " tile is too small for " +
         std::to_string(tile.warps) + " warps of " + std::to_string(v) + "-element vectors");
  }
  const std::vector<std::int64_t> shape{tile.b, tile.a};
  // Source: V consecutive a per thread, lanes along a first, warps along b.
  const std::int64_t la = std::min<std::int64_t>(32, tile.a / v);
  const std::vector<std::int64_t> s_spt{1, v}, s_tpw{32 / la, la}, s_wpc{tile.warps, 1}, s_order{1, 0};
  // Destination: V consecutive b per thread, lanes along b first, warps along a.
  const std::int64_t lb = std::min<std::int64_t>(32, tile.b / v);
  const std::vector<std::int64_t> d_spt{v, 1}, d_tpw{lb, 32 / lb}, d_wpc{1, tile.warps}, d_order{0, 1};
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
    << es << "-byte elements, " << tile.warps << " warps, " << v << "-element vectors; "
    << to_string(from) << " -> " << to_string(to) << " (" << linear::to_string(k.plan.mechanism) << ").\n";
  o << "struct __align__(16) axe_transpose_desc {\n  long long A, B, sb, da, soff, doff, tiles_a, tiles_b, batch, nb;\n"
    << "  long long bext[" << kTransposeBatchModes << "], bsst[" << kTransposeBatchModes << "], bdst["
    << kTransposeBatchModes << "];\n};\n";
  auto fn = [&](const char* name, bool load, bool edge, const Coords& c, std::int64_t regs) {
    o << "__device__ __forceinline__ void " << name << "(" << (load ? "" : "const ") << t << " (&r)[" << regs
      << "], " << (load ? "const " : "") << t << "* __restrict__ p, long long stride"
      << (edge ? ", long long xlim, long long ylim" : "") << ", unsigned lane, unsigned warp) {\n";
    emit_access(o, load, t, c, regs, v, edge);
    o << "}\n";
  };
  fn("axe_load_full", true, false, src, cf.registers());
  fn("axe_load_edge", true, true, src, cf.registers());
  fn("axe_store_full", false, false, dst, ct.registers());
  fn("axe_store_edge", false, true, dst, ct.registers());
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
    << "      if (full) axe_load_full(r, s, d.sb, lane, warp);\n"
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
