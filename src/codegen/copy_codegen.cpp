// The runtime's box copies as generated tile copies (include/axe/codegen/copy_codegen.hpp).
#include "axe/codegen/copy_codegen.hpp"

#include <algorithm>
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

bool power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Loads (stores) registers of a layout with coordinates `c` in a tile cut by the box's edge:
// each V-element vector along x moves whole when it lies within xlim and its row within ylim,
// element by element when xlim cuts it, not at all below ylim. Loads leave what they skip zero.
void emit_edge_vectors(std::ostringstream& o, bool load, const std::string& t, const Coords& c,
                       std::int64_t registers, std::int64_t v, std::int64_t es) {
  thread_terms(o, c, "tx", "ty");
  const char* vt = v * es == 16 ? "uint4" : v * es == 8 ? "uint2" : v * es == 4 ? "unsigned int" : "unsigned short";
  for (std::int64_t r = 0; r < registers; r += v) {
    const auto ur = static_cast<std::uint64_t>(r);
    const std::int64_t x = sum_of(c.m.x, ur), y = sum_of(c.m.y, ur);
    o << "  {\n    const long long x = tx + " << x << "ll, y = ty + " << y << "ll;\n"
      << "    union { " << vt << " v; " << t << " e[" << v << "]; } u;\n";
    if (load) {
      for (std::int64_t i = 0; i < v; ++i) o << "    u.e[" << i << "] = (" << t << ")0;\n";
      o << "    if (y < ylim) {\n"
        << "      if (x + " << v << "ll <= xlim) u.v = *reinterpret_cast<const " << vt << "*>(p + x + y * stride);\n"
        << "      else\n"
        << "        for (int i = 0; i < " << v << "; ++i)\n"
        << "          if (x + i < xlim) u.e[i] = p[x + i + y * stride];\n"
        << "    }\n";
      for (std::int64_t i = 0; i < v; ++i) o << "    r[" << r + i << "] = u.e[" << i << "];\n";
    } else {
      for (std::int64_t i = 0; i < v; ++i) o << "    u.e[" << i << "] = r[" << r + i << "];\n";
      o << "    if (y < ylim) {\n"
        << "      if (x + " << v << "ll <= xlim) *reinterpret_cast<" << vt << "*>(p + x + y * stride) = u.v;\n"
        << "      else\n"
        << "        for (int i = 0; i < " << v << "; ++i)\n"
        << "          if (x + i < xlim) p[x + i + y * stride] = u.e[i];\n"
        << "    }\n";
    }
    o << "  }\n";
  }
}

// Register R's two source words: w (the aligned word holding the register's first byte s0) and
// the next, for the destination word at byte `at` of its row (of type `type`). Whole where both
// hold bytes of the row only; elsewhere whole within the box's source span [span0, span1), in
// pieces of the row's own bytes past it.
void emit_source_words(std::ostringstream& o, const std::string& R, const char* type, const char* at) {
  o << "        sh[" << R << "] = (unsigned)s0 & 15u;\n"
    << "        const " << type << " wa = " << at << " - (" << type << ")sh[" << R << "];  // w's first byte in the row\n"
    << "        if (wa >= 0 && wa + 32 <= L) {\n"
    << "          lo[" << R << "] = *reinterpret_cast<const uint4*>(w);\n"
    << "          hi[" << R << "] = sh[" << R << "] ? *reinterpret_cast<const uint4*>(w + 16ull) : make_uint4(0u, 0u, 0u, 0u);\n"
    << "        } else {\n"
    << "          lo[" << R << "] = w >= span0 && w + 16ull <= span1 ? *reinterpret_cast<const uint4*>(w)\n"
    << "                    : axe_load_range(w, axe_clamp16(-wa), axe_clamp16(L - wa));\n"
    << "          hi[" << R << "] = !sh[" << R << "] ? make_uint4(0u, 0u, 0u, 0u)\n"
    << "                    : w + 16ull >= span0 && w + 32ull <= span1 ? *reinterpret_cast<const uint4*>(w + 16ull)\n"
    << "                    : axe_load_range(w + 16ull, axe_clamp16(-wa - 16), axe_clamp16(L - wa - 16));\n"
    << "        }\n";
}

// One destination word, register R: word m (of type `type`, int or long long) of row y, both in
// scope. The row's bytes `at` are `type` (32-bit where rows are under 2^31 - 64 bytes, checked by
// the caller: a word's first byte plus 32 stays under INT_MAX); at[R] = L marks no word to store.
void emit_word(std::ostringstream& o, const std::string& R, const char* type) {
  o << "    at[" << R << "] = L;\n"
    << "    if (y < ylim) {\n"
    << "      const unsigned long long D = (unsigned long long)(o + y * db), S = (unsigned long long)(s + y * sb);\n"
    << "      const " << type << " a = 16 * m - (" << type << ")(D & 15ull);\n"
    << "      if (a < L) {\n"
    << "        at[" << R << "] = a;\n"
    << "        wd[" << R << "] = D + (long long)a;\n"
    << "        const unsigned long long s0 = S + (long long)a, w = s0 & ~15ull;\n";
  emit_source_words(o, R, type, "a");
  o << "      }\n    }\n  }\n";
}

// The registers' declarations and, after their loads, their stores: a word inside its row whole,
// one at the row's ends in pieces of the row's own bytes.
void emit_word_registers(std::ostringstream& o, std::int64_t registers, const char* type) {
  o << "  uint4 lo[" << registers << "], hi[" << registers << "];\n"
    << "  unsigned long long wd[" << registers << "];\n"
    << "  unsigned sh[" << registers << "];\n"
    << "  " << type << " at[" << registers << "];  // the word's first byte in its row; L: no word to store\n";
}
void emit_word_stores(std::ostringstream& o, std::int64_t registers) {
  for (std::int64_t r = 0; r < registers; ++r) {
    const std::string R = std::to_string(r);
    o << "  if (at[" << R << "] < L) {\n"
      << "    const uint4 v = axe_shift16(lo[" << R << "], hi[" << R << "], sh[" << R << "]);\n"
      << "    if (at[" << R << "] >= 0 && at[" << R << "] + 16 <= L) *reinterpret_cast<uint4*>(wd[" << R << "]) = v;\n"
      << "    else axe_store_range(wd[" << R << "], axe_clamp16(-at[" << R << "]), axe_clamp16(L - at[" << R
      << "]), v);\n"
      << "  }\n";
  }
}

// The destination words of one tile: registers (words) with coordinates `c` (x: the word within
// the tile, y: the row), rows at s + y * sb and o + y * db (bytes), L bytes each, words a0w + x.
// A word whose two source words hold bytes of its row only (the row's inside: all but about two
// words a row) is read whole with no other test; elsewhere a source word within [span0, span1),
// the bytes from the box's lowest to its highest source element, is read whole even where it
// holds bytes outside the row (they are inside the buffer), and only a word reaching past the
// box's span is read in pieces of the row's own bytes. Stores write the row's bytes only: whole
// inside the row, in pieces at its ends. Every load of the thread is issued before its first
// store. The row's bytes are 32-bit (`type` int) unless the tile is wide (long long): one H200,
// 2026-11-29, the same tile in the same run (examples/results/1xH200/one_wave_2026-11-29/, call 7),
// u8 unpack / copy 76.8-76.9 / 89.3-89.5% of memcpy against 75.6 / 88.6% in 64 bits, the u8 2-D
// pack 84.2 against 79.6, bf16 pack / unpack 91.5-91.8 / 85.3-85.6 against 89.0 / 83.4, f32 level
// (92.6-92.7 / 89.4-89.7 / 91.1-91.7 against 92.9 / 89.5 / 91.4). Against the version that
// tested every word as a row end (64-bit clamps of its bounds, the span tests): the
// uneven rows of kernel_bench took 0.7-3% less time (u8 pack / unpack / copy 78.0 / 75.0 / 88.0% of
// memcpy against 77.5-78.0 / 74.2-74.5 / 85.2-85.5%, bf16 pack 90.0% against 87.9-88.2%, f32 pack
// 92.7% against 91.2-91.7%), the bf16 copy 0.6% more (89.7-89.8% against 90.2-90.4%); two builds
// alternated twice on one H200, 2026-11-28 (examples/results/1xH200/words_2026-11-28/).
void emit_words(std::ostringstream& o, const Coords& c, std::int64_t registers, const char* type) {
  thread_terms(o, c, "tx", "ty");
  emit_word_registers(o, registers, type);
  for (std::int64_t r = 0; r < registers; ++r) {
    const auto ur = static_cast<std::uint64_t>(r);
    o << "  {\n    const long long y = ty + " << sum_of(c.m.y, ur) << "ll;\n"
      << "    const " << type << " m = (" << type << ")(a0w + tx + " << sum_of(c.m.x, ur) << "ll);\n";
    emit_word(o, std::to_string(r), type);
  }
  emit_word_stores(o, registers);
}

// The destination words of a flat tile: the box's rows taken one after another as a sequence of
// W = (L + 30) / 16 words each (a row of L bytes touches at most W destination words), the tile
// words g0 .. g0 + T of it, register r of a thread word g0 + tx + x_r. A thread's word m of row y
// comes from a division by W: the tile's first word by a double reciprocal (rinv, exact after one
// correction for words under 2^53), each register's by a float one on the words since that
// (under W + T words: exact after one correction, axe_row_of_word). The words then move as in
// emit_words, with the row's bytes `at` in 32 bits (rows under 2^31 - 64 bytes, checked by the caller).
void emit_flat_words(std::ostringstream& o, const Coords& c, std::int64_t registers) {
  thread_terms(o, c, "tx", "ty");
  o << "  (void)ty;  // one row of words\n"
    << "  long long r0 = (long long)((double)g0 * rinv);\n"
    << "  long long m0 = g0 - r0 * W;\n"
    << "  if (m0 < 0) { --r0; m0 += W; } else if (m0 >= W) { ++r0; m0 -= W; }\n"
    << "  const float finv = (float)rinv;\n";
  emit_word_registers(o, registers, "int");
  for (std::int64_t r = 0; r < registers; ++r) {
    const auto ur = static_cast<std::uint64_t>(r);
    o << "  {\n    const int g = (int)m0 + (int)tx + " << sum_of(c.m.x, ur) << ";\n"
      << "    int m;\n"
      << "    const long long y = r0 + axe_row_of_word(g, (int)W, finv, m);\n";
    emit_word(o, std::to_string(r), "int");
  }
  emit_word_stores(o, registers);
}

}  // namespace

CopyTile default_copy_tile(std::int64_t element_bytes, TransposeAccess access, std::int64_t run, bool packed) {
  const bool words = access == TransposeAccess::realigned;
  const std::int64_t v = access == TransposeAccess::scalar ? 1 : 16 / element_bytes;
  // Short runs: lanes along a as many as the run fills (a power of two within it), 4 rows a thread.
  // For destination words too, though a 4094-byte row's 257 words leave 31 of the last tile's 32
  // lanes idle: 8 lanes were slower still (kernel_bench, one H100, 2026-11-27, before source words
  // were read whole: bf16 rows of 2047 unpacked at 60.5% of memcpy with 8 lanes, 77.1% with 32;
  // f32 86.8% with 16, 89.8% with 32).
  std::int64_t a = 32 * v;
  while (a > v && a > run) a /= 2;
  if (a < 32 * v) return CopyTile{a, 4, 8};
  // Runs of a warp's vectors and more: ka vectors (words) along the run a lane, 1, 2 or 4, and
  // rows to hold 8 vectors (4 words) a thread. kernel_bench on one H200, 2026-11-28, 8 warps
  // (examples/results/1xH200/wide_tiles_2026-11-28/), % of memcpy:
  // - vectors, f32 runs of 4096 bytes (256 vectors): pack / unpack 93.3 / 93.0% with 4 a lane by 2
  //   rows, 93.3 / 93.6% with 8 by 1, against 89.4 / 85.0% with 1 by 4 (this default before) and
  //   91.1 / 90.9% with 4 by 1: the vectors a thread holds count most.
  // - scalar (f32 rows of 2047): 4 a lane by 2 rows 85.4%, 8 by 1 81.3%, 1 by 4 64.7%.
  // - words: over 4 a thread spilled (4 by 2: f32 40%); 4 words along the run took every row
  //   whose tiles were at most a quarter of its words (f32 rows of 513 and 1023 words: 86.8 /
  //   84.4 / 89.2% pack / unpack / copy against 84.4 / 81.2 / 84.7% with 1 by 4; bf16 rows of 512
  //   words 88.4% against 82.4%), 2 along it the rows of 257 words (bf16 pack / unpack 82.3 /
  //   79.8% against 80.4 / 76.7%, u8 copy 81.7% against 76.8%; 4 along it 74.9 / 73.1 / 71.4%),
  //   1 those of 129 (u8 pack / unpack 75.6 / 70.6%; 2 along it 66.9 / 64.6%).
  // Flat word tiles (4 words a thread, 8 warps) where they measured faster: kernel_bench on one
  // H200, 2026-11-28, two rounds (examples/results/1xH200/flat_2026-11-28/), % of memcpy, flat
  // against these 2-D tiles: the u8 pack of rows of 2047 85.8-86.0 against 78.0-78.1; but its
  // unpack 74.1-74.3 against 74.9-75.0, the u8 copy 83.2 against 87.8-88.0, bf16 79.5-86.0
  // against 85.0-90.2, f32 84.6-89.3 against 89.1-92.6 (the 2- and 4-byte flat kernels spilled
  // 8-16 bytes then; without the spill, 2026-11-29, examples/results/1xH200/one_wave_2026-11-29/,
  // call 1: bf16 pack / unpack / copy 89.0 / 81.6 / 84.9 against 90.3 / 85.2 / 89.9, f32 91.9 /
  // 86.6 / 88.5 against 93.0 / 89.1 / 91.2; on one wave and 32-bit 2-D words, call 7, still level
  // or behind).
  if (words && packed && element_bytes == 1) return CopyTile{1024 * v, 1, 8, true};
  std::int64_t ka = 4;
  if (words) {
    const std::int64_t row_words = (run * element_bytes + 30) / 16;
    while (ka > 1 && 4 * 32 * ka > row_words) ka /= 2;
    return CopyTile{32 * v * ka, 4 / ka, 8};
  }
  while (ka > 1 && 32 * v * ka > run) ka /= 2;
  return CopyTile{32 * v * ka, ka == 1 ? 4 : 8 / ka, 8};
}

CopyTile copy_words_tile(std::int64_t element_bytes, std::int64_t run, bool packed, std::int64_t longest_row_bytes,
                         const CopyTile* forced) {
  const std::int64_t v = 16 / element_bytes;
  CopyTile t = forced ? *forced
                      : default_copy_tile(element_bytes, TransposeAccess::realigned, run,
                                          packed && copy_rows_fit_32(longest_row_bytes));
  if (!t.flat && !copy_rows_fit_32(longest_row_bytes, (t.a ? t.a : 32 * v) / v)) t.wide = true;
  return t;
}

CopyKernel copy_kernel(const Element& element, const CopyTile& tile, TransposeAccess access) {
  const std::int64_t es = element.bytes;
  if (!power_of_two(es) || es > 8) fail("copy: element size " + std::to_string(es) + " is not 1, 2, 4 or 8 bytes");
  CopyKernel k;
  k.access = access;
  k.vector = access == TransposeAccess::scalar ? 1 : 16 / es;
  const std::int64_t v = k.vector;
  const std::int64_t ta = tile.a == 0 ? 32 * v : tile.a;
  for (std::int64_t e : {ta, tile.rows, tile.warps}) {
    if (!power_of_two(e)) fail("copy tile extents, rows and warps must be powers of two");
  }
  const bool words = access == TransposeAccess::realigned, flat = tile.flat, exchange = tile.exchange;
  k.threads = 32 * tile.warps;
  if (exchange && (access != TransposeAccess::scalar || flat || tile.wide)) {
    fail("exchanged copy tiles take one element an access (scalar), not " + std::string(to_string(access)) +
         (flat ? ", and are not flat" : tile.wide ? ", and are not wide" : ""));
  }
  if (exchange && (tile.rows != 1 || ta < 128 * tile.warps || ta / (32 * tile.warps) > kMaxCopyVectorsPerThread)) {
    fail("an exchanged copy tile of " + std::to_string(ta) + " elements, " + std::to_string(tile.rows) + " rows and " +
         std::to_string(tile.warps) + " warps: one row, 4 to " + std::to_string(kMaxCopyVectorsPerThread) +
         " elements a thread (" + std::to_string(128 * tile.warps) + " to " +
         std::to_string(32 * tile.warps * kMaxCopyVectorsPerThread) + ")");
  }
  if (tile.wide && (!words || flat)) {
    fail(std::string("wide copy tiles (64-bit row arithmetic) are 2-D destination words only, not ") +
         (flat ? std::string("flat tiles") : std::string(to_string(access))));
  }
  k.wide = tile.wide;
  const char* row_type = tile.wide ? "long long" : "int";  // destination words: the row's bytes
  if (flat) {
    if (!words)
      fail("flat copy tiles move destination words: realigned access only, not " + std::string(to_string(access)));
    const std::int64_t per_thread = ta / v / k.threads;
    if (tile.rows != 1 || ta / v < k.threads || per_thread > kMaxCopyVectorsPerThread) {
      fail("a flat copy tile of " + std::to_string(ta / v) + " words, " + std::to_string(tile.rows) + " rows and " +
           std::to_string(tile.warps) + " warps: one row, 1 to " + std::to_string(kMaxCopyVectorsPerThread) +
           " words a thread");
    }
  } else if (!exchange && (ta < v || ta > kMaxCopyVectorsAlongA * v)) {
    fail("a copy tile of " + std::to_string(ta) + " elements along its run holds 1 to " +
         std::to_string(kMaxCopyVectorsAlongA) + " " + std::to_string(v) + "-element vectors along it");
  }
  // Lanes along a first (la), then registers (ka vectors a lane) where the tile is wider than a warp.
  const std::int64_t la = std::min<std::int64_t>(32, ta / v), lb = 32 / la;
  if (!flat && !exchange && ta / (v * la) * tile.rows > kMaxCopyVectorsPerThread) {
    fail("a copy tile of " + std::to_string(ta) + " x " + std::to_string(tile.rows) + " rows gives a thread " +
         std::to_string(ta / (v * la) * tile.rows) + " vectors, over " + std::to_string(kMaxCopyVectorsPerThread));
  }
  k.tile_a = ta;
  k.tile_b = flat || exchange ? 1 : tile.rows * lb * tile.warps;
  k.flat = flat;
  k.exchange = exchange;
  // The layout's shape: elements (vectors of V), or destination words (one per register).
  const std::int64_t wa = words ? ta / v : ta;
  const std::vector<std::int64_t> shape{k.tile_b, wa};
  // One layout for both sides: V consecutive a per vector, la lanes along a first, then lanes and
  // warps down b, repeated along a where the tile is wider than 32 vectors, then R times down b (a
  // thread's rows are lb x W apart, so each warp access covers whole rows or runs of consecutive
  // rows: rows per thread inside the lanes, blocked [R, V], made a warp's 16-byte pieces of one
  // 64-byte packed row land in four instructions and ran a 16-byte-run pack at 19.5% of memcpy
  // against 65.5% for the box kernel, kernel_bench on one H100, 2026-11-27).
  // Flat tiles: one row of words, lanes then warps along it, then the registers.
  const std::vector<std::int64_t> spt{1, words ? 1 : v}, tpw{flat ? 1 : lb, flat ? 32 : la},
      wpc{flat ? 1 : tile.warps, flat ? tile.warps : 1}, order{1, 0};
  const AxeLayout layout =
      linear::from_linear(linear::blocked_layout(shape, spt, tpw, wpc, order)).layout;
  const ThreadColumns cols = thread_columns(layout, shape);
  const Coords c = coords_of(cols, wa, true);
  k.registers = cols.registers() * (words ? v : 1);  // elements a thread holds
  const std::string t(element_type(es));
  // Exchanged tiles: one row, loaded 4 consecutive elements a thread, stored one a thread, lanes
  // and warps along the row in both; the plan converts between them.
  const std::vector<std::int64_t> row{1, ta}, four{1, 4}, one{1, 1}, lanes{1, 32}, warps{1, tile.warps};
  const AxeLayout xfrom =
      exchange ? linear::from_linear(linear::blocked_layout(row, four, lanes, warps, order)).layout : layout;
  const AxeLayout xto = exchange ? linear::from_linear(linear::blocked_layout(row, one, lanes, warps, order)).layout
                                 : layout;
  linear::ConvertPlan plan;
  if (exchange) {
    linear::ConvertOptions opts;
    opts.element_bytes = es;
    opts.shared_budget_bytes = ta * es;  // one repetition
    plan = linear::plan_conversion(xfrom, xto, row, opts);
    k.shared_bytes = (plan.counts.shared_bytes + 15) / 16 * 16;
    k.mechanism = linear::to_string(plan.mechanism);
    k.registers = ta / k.threads;
  }
  const Coords cload = exchange ? coords_of(thread_columns(xfrom, row), ta, true) : c,
               cstore = exchange ? coords_of(thread_columns(xto, row), ta, true) : c;

  std::ostringstream o;
  o << "// Generated by axe (codegen/copy_codegen): " << k.tile_b << "x" << ta << (flat ? " flat" : "") << " tiles of "
    << es << "-byte elements, " << tile.warps << " warps, " << to_string(access);
  if (exchange)
    o << "; loads " << to_string(xfrom) << ", stores " << to_string(xto) << " (" << k.mechanism << ").\n";
  else
    o << "; both sides " << to_string(layout) << ".\n";
  o << "struct __align__(16) axe_copy_box {\n"
    << "  long long A, B, sb, db, soff, doff, tiles_a, tiles_b, first, tiles, nb, source;\n"
    << "  long long bext[" << kCopyBatchModes << "], bsst[" << kCopyBatchModes << "], bdst[" << kCopyBatchModes
    << "];\n  long long per, small, smin, smax;\n};\n";
  if (flat) {
    o << "#define AXE_ES " << es << "\n" << kRealignHelpers << kWordHelpers << kFlatWordHelpers
      << "__device__ __forceinline__ void axe_copy_flat(const unsigned char* __restrict__ s, unsigned char* __restrict__ o, "
         "long long sb, long long db, int L, long long g0, long long W, double rinv, long long ylim, "
         "unsigned long long span0, unsigned long long span1, unsigned lane, unsigned warp) {\n";
    emit_flat_words(o, c, cols.registers());
    o << "}\n";
  } else if (words) {
    o << "#define AXE_ES " << es << "\n" << kRealignHelpers << kWordHelpers
      << "__device__ __forceinline__ void axe_copy_words(const unsigned char* __restrict__ s, unsigned char* __restrict__ o, "
         "long long sb, long long db, " << row_type << " L, long long a0w, long long ylim, unsigned long long span0, "
         "unsigned long long span1, unsigned lane, unsigned warp) {\n";
    emit_words(o, c, cols.registers(), row_type);
    o << "}\n";
  } else {
    auto fn = [&](const char* name, bool load, bool edge) {
      const Coords& side = load ? cload : cstore;
      o << "__device__ __forceinline__ void " << name << "(" << (load ? "" : "const ") << t << " (&r)["
        << k.registers << "], " << (load ? "const " : "") << t << "* __restrict__ p, long long stride"
        << (edge ? ", long long xlim, long long ylim" : "") << ", unsigned lane, unsigned warp) {\n";
      if (edge && v > 1) emit_edge_vectors(o, load, t, side, k.registers, v, es);
      else emit_access(o, load, t, side, k.registers, v, edge);
      o << "}\n";
    };
    if (exchange) o << emit_conversion(plan, row, es, "axe_exchange");
    fn("axe_load_full", true, false);
    fn("axe_load_edge", true, true);
    fn("axe_store_full", false, false);
    fn("axe_store_edge", false, true);
  }
  constexpr int desc_words = sizeof(CopyBoxDesc) / 8;
  // At least 1024 threads per SM (64 registers for 256 threads), or 768 for destination words
  // (80 registers, as the realigned-row kernel; at 64 ptxas spilled 40-152 bytes of them).
  o << "extern \"C\" __global__ void __launch_bounds__(" << k.threads << ", "
    << std::max<std::int64_t>(1, (words ? 768 : 1024) / k.threads)
    << ") " << k.name << "(const " << t
    << "* __restrict__ src, " << t << "* __restrict__ dst, const " << t
    << "* __restrict__ src2, const axe_copy_box* __restrict__ table, int nboxes, long long tiles) {\n"
    << "  __shared__ axe_copy_box sd;\n  __shared__ int sbox;\n"
    << (exchange ? "  __shared__ __align__(16) unsigned char smem[" + std::to_string(k.shared_bytes) + "];\n" : "")
    << "  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;\n"
    << "  long long begin = 0, end = 0;  // the tiles of the box in sd (none yet)\n"
    << (flat ? "  long long W = 1;  // the box's words a row\n  double rinv = 1.0;\n" : "")
    << "  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {\n"
    << "    if (t >= end) {  // the box of tile t: the last whose first tile is <= t (32-ary search)\n"
    << "      __syncthreads();\n"
    << "      if (threadIdx.x < 32) {\n"
    << "        int lo = 0, n = nboxes;\n"
    << "        while (n > 1) {\n"
    << "          const int step = (n + 31) / 32, cand = lo + (int)threadIdx.x * step;\n"
    << "          const unsigned mask = __ballot_sync(0xffffffffu, cand < lo + n && table[cand].first <= t);\n"
    << "          const int last = 31 - __clz(mask);\n"
    << "          lo += last * step;\n          n = min(step, n - last * step);\n        }\n"
    << "        if (threadIdx.x == 0) sbox = lo;\n      }\n"
    << "      __syncthreads();\n"
    << "      for (unsigned i = threadIdx.x; i < " << desc_words << "u; i += blockDim.x)\n"
    << "        reinterpret_cast<long long*>(&sd)[i] = reinterpret_cast<const long long*>(table + sbox)[i];\n"
    << "      __syncthreads();\n"
    << "      begin = sd.first;\n      end = sd.first + sd.tiles;\n"
    << (flat ? "      W = (sd.A * " + std::to_string(es) + "ll + 30) / 16;\n      rinv = 1.0 / (double)W;\n" : "")
    << "    }\n";
  if (flat) {
    // A flat tile's place: its batch entry (none without batch modes) and its words in it.
    o << "    long long ia = t - begin, so = sd.soff, dof = sd.doff;\n"
      << "    if (sd.nb) {\n"
      << "      long long q;\n"
      << "      if (sd.small) {\n"
      << "        const unsigned u = (unsigned)ia, per = (unsigned)sd.per, uq = u / per;\n"
      << "        ia = u - uq * per;\n        q = uq;\n"
      << "      } else {\n"
      << "        q = ia / sd.per;\n        ia -= q * sd.per;\n      }\n"
      << "      for (int m = (int)sd.nb - 1; m >= 0; --m) {\n"
      << "        const long long i = q % sd.bext[m];\n        q /= sd.bext[m];\n"
      << "        so += i * sd.bsst[m];\n        dof += i * sd.bdst[m];\n      }\n"
      << "    }\n"
      << "    const " << t << "* base = sd.source ? src2 : src;\n"
      << "    axe_copy_flat((const unsigned char*)(base + so), (unsigned char*)(dst + dof), sd.sb * " << es
      << "ll, sd.db * " << es << "ll, (int)(sd.A * " << es << "ll), ia * " << ta / v
      << "ll, W, rinv, sd.B, (unsigned long long)(base + sd.smin), (unsigned long long)(base + sd.smax + 1), lane, "
         "warp);\n  }\n}\n";
    k.source = o.str();
    return k;
  }
  o << "    // The tile's place in its box: 32-bit divisions where the box's indices fit (`small`).\n"
    << "    long long ia, ib, so = sd.soff, dof = sd.doff;\n"
    << "    if (sd.small) {\n"
    << "      const unsigned u = (unsigned)(t - begin), per = (unsigned)sd.per, ta = (unsigned)sd.tiles_a;\n"
    << "      unsigned q = u / per;\n"
    << "      const unsigned in = u - q * per, b = in / ta;\n"
    << "      ia = in - b * ta;\n      ib = b;\n"
    << "      for (int m = (int)sd.nb - 1; m >= 0; --m) {\n"
    << "        const unsigned e = (unsigned)sd.bext[m], nq = q / e, i = q - nq * e;\n        q = nq;\n"
    << "        so += (long long)i * sd.bsst[m];\n        dof += (long long)i * sd.bdst[m];\n      }\n"
    << "    } else {\n"
    << "      const long long u = t - begin;\n"
    << "      long long q = u / sd.per;\n"
    << "      const long long in = u - q * sd.per;\n"
    << "      ib = in / sd.tiles_a;\n      ia = in - ib * sd.tiles_a;\n"
    << "      for (int m = (int)sd.nb - 1; m >= 0; --m) {\n"
    << "        const long long i = q % sd.bext[m];\n        q /= sd.bext[m];\n"
    << "        so += i * sd.bsst[m];\n        dof += i * sd.bdst[m];\n      }\n"
    << "    }\n"
    << "    const long long b0 = ib * " << k.tile_b << "ll;\n";
  if (words) {
    o << "    const " << t << "* base = sd.source ? src2 : src;\n"
      << "    const " << t << "* s = base + so + b0 * sd.sb;\n"
      << "    " << t << "* o = dst + dof + b0 * sd.db;\n"
      << "    axe_copy_words((const unsigned char*)s, (unsigned char*)o, sd.sb * " << es << "ll, sd.db * " << es
      << "ll, (" << row_type << ")(sd.A * " << es << "ll), ia * " << wa << "ll, sd.B - b0, (unsigned long long)(base + sd.smin), "
      << "(unsigned long long)(base + sd.smax + 1), lane, warp);\n  }\n}\n";
  } else {
    o << "    const long long a0 = ia * " << ta << "ll;\n"
      << "    const " << t << "* s = (sd.source ? src2 : src) + so + a0 + b0 * sd.sb;\n"
      << "    " << t << "* o = dst + dof + a0 + b0 * sd.db;\n"
      << "    " << t << " r[" << k.registers << "];\n"
      << "    const bool full = a0 + " << ta << "ll <= sd.A && b0 + " << k.tile_b << "ll <= sd.B;\n"
      << "    if (full) axe_load_full(r, s, sd.sb, lane, warp);\n"
      << "    else axe_load_edge(r, s, sd.sb, sd.A - a0, sd.B - b0, lane, warp);\n";
    const char* out = "r";
    if (exchange) {
      o << "    " << t << " q[" << k.registers << "];\n"
        << "    __syncthreads();  // the last tile's exchange has read the buffer\n"
        << "    axe_exchange(r, q, smem, lane, warp);\n";
      out = "q";
    }
    o << "    if (full) axe_store_full(" << out << ", o, sd.db, lane, warp);\n"
      << "    else axe_store_edge(" << out << ", o, sd.db, sd.A - a0, sd.B - b0, lane, warp);\n"
      << "  }\n}\n";
  }
  k.source = o.str();
  return k;
}

}  // namespace axe::codegen
