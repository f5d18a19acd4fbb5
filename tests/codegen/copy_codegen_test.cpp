// The runtime's box copies as generated tile copies (include/axe/codegen/copy_codegen.hpp): the
// kernel's tile, registers and paths for hand-derived tiles, the default tiles, and bad tiles.
// That the kernels compile is tests/cuda/generated_kernels_test.cpp; that they copy,
// Kernels.CopyGenerated_* in tests/cuda/kernels_test.cpp.
#include "axe/codegen/copy_codegen.hpp"

#include <gtest/gtest.h>

#include <string>

#include "axe/core/error.hpp"
#include "support/test_support.hpp"

namespace axe::test::codegen {
namespace {

using namespace axe::codegen;

using axe::test::count_of;

const Element kRaw4(4, Element::Kind::integer, "raw");

// f32, vectors, 32 lanes along the run (128 elements), 4 rows per thread, 8 warps: one row per
// warp, repeated 4 times, so the tile is 4 x 1 x 8 = 32 rows of 128; 16 registers = 4 vectors per
// thread, each loaded and stored whole in full tiles; cut tiles test each vector against the run
// (whole, or element by element) and the row.
TEST(CopyKernel, F32_32x128_ByHand) {
  const auto k = copy_kernel(kRaw4, CopyTile{128, 4, 8}, TransposeAccess::vectors);
  EXPECT_EQ(k.threads, 256);
  EXPECT_EQ(k.vector, 4);
  EXPECT_EQ(k.tile_a, 128);
  EXPECT_EQ(k.tile_b, 32);
  EXPECT_EQ(k.registers, 16);
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<const uint4*>(p + base"), 4) << k.source;
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<uint4*>(p + base"), 4) << k.source;
  EXPECT_EQ(count_of(k.source, "if (x + 4ll <= xlim)"), 8) << k.source;  // 4 vectors, each way
  EXPECT_EQ(count_of(k.source, "__shared__"), 2);                         // the box descriptor and its index only
  // Warp w holds row w of each 8-row repetition, so a thread's vector j is 8 j rows below its
  // first (blocked [1, 4] / [1, 32] / [8, 1] repeated 4 times); lane l starts at element 4 l.
  EXPECT_NE(k.source.find("p + base + (0ll + 24ll * stride)"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("((warp >> 2 & 1u) ? 4ll : 0ll)"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("((lane >> 4 & 1u) ? 64ll : 0ll)"), std::string::npos) << k.source;
}

// A short run: 4 lanes along 16 f32, 8 lanes down b, 2 warps, repeated twice: 2 x 8 x 2 = 32
// rows of 16. Each warp access covers 8 consecutive whole rows (512 contiguous bytes of a packed
// side): lane bit 2 is the next row, warp 1 starts 8 rows down, the repetition 16 rows down.
TEST(CopyKernel, ShortRunPutsLanesDownTheRows) {
  const auto k = copy_kernel(kRaw4, CopyTile{16, 2, 2}, TransposeAccess::vectors);
  EXPECT_EQ(k.tile_a, 16);
  EXPECT_EQ(k.tile_b, 32);
  EXPECT_EQ(k.threads, 64);
  EXPECT_EQ(k.registers, 8);
  EXPECT_NE(k.source.find("((lane >> 2 & 1u) ? 1ll : 0ll)"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("((warp >> 0 & 1u) ? 8ll : 0ll)"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("p + base + (0ll + 16ll * stride)"), std::string::npos) << k.source;
}

// Scalar: one element per access (no vector types). Realigned: destination words, one per
// register: 16-bit elements on a 64-element tile are 8 words per row, 8 lanes along them and 4
// down the rows, 8 warps, repeated 4 times: 128 rows, each thread 4 words (32 elements), rows 32
// apart, every word range-checked against its row, read whole inside the box's source span and
// through the range helper past it, and written through the range helper.
TEST(CopyKernel, ScalarAndRealignedAccesses) {
  const auto s = copy_kernel(kRaw4, CopyTile{32, 4, 8}, TransposeAccess::scalar);
  EXPECT_EQ(s.vector, 1);
  EXPECT_EQ(count_of(s.source, "uint4*>(p"), 0);
  const Element e2(2, Element::Kind::integer, "raw");
  const auto r = copy_kernel(e2, CopyTile{64, 4, 8}, TransposeAccess::realigned);
  EXPECT_EQ(r.vector, 8);
  EXPECT_EQ(r.tile_b, 4 * 4 * 8);
  EXPECT_EQ(r.registers, 32);
  // Each word's two source words: whole inside the box's source span, else in the row's pieces.
  EXPECT_EQ(count_of(r.source, ": axe_load_range(w, "), 4) << r.source;
  EXPECT_EQ(count_of(r.source, "w >= span0 && w + 16ull <= span1"), 4) << r.source;
  EXPECT_EQ(count_of(r.source, "w + 16ull >= span0 && w + 32ull <= span1"), 4) << r.source;
  EXPECT_EQ(count_of(r.source, "axe_store_range(wd["), 4) << r.source;
  EXPECT_NE(r.source.find("const long long y = ty + 96ll;"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("((lane >> 3 & 1u) ? 1ll : 0ll)"), std::string::npos) << r.source;  // lane 8: next row
  // The row's bytes in 32 bits, one declaration a register; 64 bits in a wide tile.
  EXPECT_EQ(count_of(r.source, "const int a = 16 * m - (int)(D & 15ull);"), 4) << r.source;
  EXPECT_NE(r.source.find("long long db, int L, long long a0w"), std::string::npos) << r.source;
  const auto w = copy_kernel(e2, CopyTile{64, 4, 8, false, true}, TransposeAccess::realigned);
  EXPECT_TRUE(w.wide);
  EXPECT_EQ(count_of(w.source, "const long long a = 16 * m - (long long)(D & 15ull);"), 4) << w.source;
  EXPECT_EQ(count_of(w.source, "const long long m = (long long)(a0w + tx + "), 4) << w.source;
  EXPECT_NE(w.source.find("long long db, long long L, long long a0w"), std::string::npos) << w.source;
  EXPECT_EQ(count_of(w.source, "const int a = "), 0) << w.source;
  EXPECT_EQ(count_of(w.source, "const long long wa = a - (long long)sh["), 4) << w.source;
}

// The tile of destination words by the longest row: 32-bit row arithmetic while a word's first
// byte in its row plus 32 stays under INT_MAX (copy_rows_fit_32: row + 16 x the tile's words <
// 2^31 - 64), else a wide (64-bit) 2-D tile; the default u8 tile of a 2047-byte run is 32 words
// (512 elements), so rows of 2^31 - 64 - 512 bytes or more take 64 bits.
TEST(CopyKernel, WordsTileTurnsWideOnLongRows) {
  const std::int64_t limit = (std::int64_t{1} << 31) - 64;
  EXPECT_TRUE(copy_rows_fit_32(limit - 1));
  EXPECT_FALSE(copy_rows_fit_32(limit));
  EXPECT_TRUE(copy_rows_fit_32(limit - 512 - 1, 32));
  EXPECT_FALSE(copy_rows_fit_32(limit - 512, 32));
  EXPECT_FALSE(copy_rows_fit_32(-1));
  EXPECT_FALSE(copy_words_tile(1, 2047, false, limit - 512 - 1).wide);
  const CopyTile w = copy_words_tile(1, 2047, false, limit - 512);
  EXPECT_TRUE(w.wide && !w.flat && w.a == 512 && w.rows == 4);
  // Packed u8 rows: flat where they fit, else the 2-D default of the run, wide.
  EXPECT_TRUE(copy_words_tile(1, 2047, true, 2047).flat);
  const CopyTile p = copy_words_tile(1, limit, true, limit);
  EXPECT_TRUE(!p.flat && p.wide) << p.a;
  // A forced tile keeps its shape; a forced flat tile stays flat (the caller refuses its long rows).
  const CopyTile forced{64, 2, 4};
  const CopyTile f = copy_words_tile(2, 100, false, limit, &forced);
  EXPECT_TRUE(f.a == 64 && f.rows == 2 && f.warps == 4 && f.wide);
  const CopyTile flat{1024 * 16, 1, 8, true};
  EXPECT_TRUE(copy_words_tile(1, 100, false, limit, &flat).flat);
  EXPECT_FALSE(copy_words_tile(1, 100, false, limit, &flat).wide);
}

// A tile wider than a warp's vectors: 32 lanes along the run, then registers. f32 vectors on a
// 512-element tile: 4 vectors a lane (lane l at elements 4 l, 4 l + 128, + 256, + 384), 2 rows,
// 4 warps down the rows: 8 rows of 512, 32 registers a thread, 8 whole-vector loads.
TEST(CopyKernel, WideTileRepeatsAlongTheRun) {
  const auto k = copy_kernel(kRaw4, CopyTile{512, 2, 4}, TransposeAccess::vectors);
  EXPECT_EQ(k.tile_a, 512);
  EXPECT_EQ(k.tile_b, 8);
  EXPECT_EQ(k.threads, 128);
  EXPECT_EQ(k.registers, 32);
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<const uint4*>(p + base"), 8) << k.source;
  EXPECT_NE(k.source.find("p + base + (384ll + 0ll * stride)"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("p + base + (384ll + 4ll * stride)"), std::string::npos) << k.source;
  // Realigned: 64 words of 16-bit elements, 2 a lane (words l and l + 32).
  const auto r = copy_kernel(Element(2, Element::Kind::integer, "raw"), CopyTile{512, 1, 2}, TransposeAccess::realigned);
  EXPECT_EQ(r.tile_a, 512);
  EXPECT_EQ(r.tile_b, 2);
  EXPECT_EQ(r.registers, 16);
  EXPECT_EQ(count_of(r.source, "axe_store_range(wd["), 2) << r.source;
  EXPECT_NE(r.source.find("a0w + tx + 32ll"), std::string::npos) << r.source;
}

// Flat word tiles: u8, 1024 words on 8 warps: one row of the box's words taken row after row,
// lanes then warps along it, so a thread holds 4 words 256 apart (tx, tx + 256, + 512, + 768), 64
// registers of bytes; every word found by the division by the row's words, each range-checked.
TEST(CopyKernel, FlatWordsByHand) {
  const Element e1(1, Element::Kind::integer, "raw");
  const auto k = copy_kernel(e1, CopyTile{1024 * 16, 1, 8, true}, TransposeAccess::realigned);
  EXPECT_TRUE(k.flat);
  EXPECT_EQ(k.threads, 256);
  EXPECT_EQ(k.tile_a, 1024 * 16);
  EXPECT_EQ(k.tile_b, 1);
  EXPECT_EQ(k.registers, 64);
  for (const char* x : {"(int)tx + 0;", "(int)tx + 256;", "(int)tx + 512;", "(int)tx + 768;"})
    EXPECT_NE(k.source.find(x), std::string::npos) << x << "\n" << k.source;
  EXPECT_EQ(count_of(k.source, "axe_row_of_word(g, (int)W, finv, m)"), 4) << k.source;
  EXPECT_EQ(count_of(k.source, "axe_store_range(wd["), 4) << k.source;
  EXPECT_NE(k.source.find("ia * 1024ll"), std::string::npos) << k.source;  // the tile's first word
  EXPECT_NE(k.source.find("W = (sd.A * 1ll + 30) / 16;"), std::string::npos) << k.source;
}

// The default tile. Short runs: the largest power of two within the run, between one vector and
// 32, 4 rows. Longer runs: 4, 2 or 1 vectors a lane along the run (as far as the run holds 32 lanes
// of them) and 8 vectors a thread; realigned words 4 a thread, along the run as far as a tile is
// at most a quarter of the row's (L + 30) / 16 words.
TEST(CopyKernel, DefaultTileFollowsTheRun) {
  auto is = [](CopyTile t, std::int64_t a, std::int64_t rows) { return t.a == a && t.rows == rows && t.warps == 8; };
  EXPECT_TRUE(is(default_copy_tile(4, TransposeAccess::vectors, 16), 16, 4));
  EXPECT_TRUE(is(default_copy_tile(4, TransposeAccess::vectors, 100), 64, 4));
  EXPECT_TRUE(is(default_copy_tile(4, TransposeAccess::vectors, 3), 4, 4));  // one vector at least
  EXPECT_TRUE(is(default_copy_tile(4, TransposeAccess::vectors, 128), 128, 4));   // 32 lanes, 1 a lane
  EXPECT_TRUE(is(default_copy_tile(4, TransposeAccess::vectors, 256), 256, 4));   // 2 a lane, 4 rows
  EXPECT_TRUE(is(default_copy_tile(4, TransposeAccess::vectors, 4096), 512, 2));  // 4 a lane, 2 rows
  EXPECT_TRUE(is(default_copy_tile(1, TransposeAccess::scalar, 2047), 128, 2));
  EXPECT_TRUE(is(default_copy_tile(2, TransposeAccess::realigned, 20), 16, 4));
  // 2047 bf16: 4094 bytes, 257 words: 64-word tiles (2 a lane), 2 rows.
  EXPECT_TRUE(is(default_copy_tile(2, TransposeAccess::realigned, 2047), 512, 2));
  // 2047 f32: 513 words: 128-word tiles (4 a lane), 1 row. 2047 u8: 129 words: 32-word tiles.
  EXPECT_TRUE(is(default_copy_tile(4, TransposeAccess::realigned, 2047), 512, 1));
  EXPECT_TRUE(is(default_copy_tile(1, TransposeAccess::realigned, 2047), 512, 4));
  // Packed destination rows of bytes: flat tiles of 1024 words; not for 2-byte elements or vectors.
  const CopyTile f = default_copy_tile(1, TransposeAccess::realigned, 2047, true);
  EXPECT_TRUE(f.flat && f.a == 1024 * 16 && f.rows == 1 && f.warps == 8);
  EXPECT_FALSE(default_copy_tile(2, TransposeAccess::realigned, 2047, true).flat);
  EXPECT_FALSE(default_copy_tile(1, TransposeAccess::vectors, 2047, true).flat);
}

// An exchanged tile of 2048 f32 on 8 warps: 8 elements a thread, loaded 4 consecutive a thread
// (element e = 1024 i + 128 warp + 4 lane + j: registers 4 i + j) and stored one a lane (e = 256 i
// + 32 warp + lane: register i), converted through 8 KiB of shared memory: each thread stores its
// two groups of 4 as two 16-byte vectors and loads its 8 elements back in two ldmatrix.x4 (4
// 32-bit registers each).
TEST(CopyKernel, ExchangedTileByHand) {
  CopyTile t{2048, 1, 8};
  t.exchange = true;
  const auto k = copy_kernel(kRaw4, t, TransposeAccess::scalar);
  EXPECT_TRUE(k.exchange);
  EXPECT_EQ(k.tile_a, 2048);
  EXPECT_EQ(k.tile_b, 1);
  EXPECT_EQ(k.threads, 256);
  EXPECT_EQ(k.registers, 8);
  EXPECT_EQ(k.vector, 1);
  EXPECT_EQ(k.shared_bytes, 2048 * 4);
  EXPECT_EQ(k.mechanism, "shared");
  EXPECT_NE(k.source.find("loads S[(2,8,32,4):(4,1@warp,1@lane,1)], stores S[(8,8,32):(1,1@warp,1@lane)]"),
            std::string::npos) << k.source;
  EXPECT_EQ(count_of(k.source, "__shared__ __align__(16) unsigned char smem[8192];"), 1) << k.source;
  EXPECT_EQ(count_of(k.source, "axe_exchange(r, q, smem, lane, warp);"), 1) << k.source;
  EXPECT_EQ(count_of(k.source, "*reinterpret_cast<uint4*>(axe_s"), 2) << k.source;
  EXPECT_EQ(count_of(k.source, "ldmatrix.sync.aligned.m8n8.x4"), 2) << k.source;
  // One element an access on both sides, no global vectors: a load thread's base is 4 lane + 128
  // warp, its register 4 element base + 1024; a store thread's base is lane + 32 warp, its
  // register 1 element base + 256.
  EXPECT_EQ(count_of(k.source, "((lane >> 0 & 1u) ? 4ll : 0ll)"), 2) << k.source;  // full and edge loads
  EXPECT_EQ(count_of(k.source, "((warp >> 0 & 1u) ? 128ll : 0ll)"), 2) << k.source;
  EXPECT_EQ(count_of(k.source, "  r[4] = p[base + (1024ll + 0ll * stride)];"), 1) << k.source;
  EXPECT_EQ(count_of(k.source, "  p[base + (256ll + 0ll * stride)] = r[1];"), 1) << k.source;
  EXPECT_EQ(count_of(k.source, "= p[base + "), 8) << k.source;
  EXPECT_EQ(count_of(k.source, "  p[base + "), 8) << k.source;
  EXPECT_EQ(k.source.find("reinterpret_cast<const uint4*>(p"), std::string::npos) << k.source;
  // 16 elements a thread on 8 warps, and 4 on 2 (the smallest).
  t.a = 4096;
  EXPECT_EQ(copy_kernel(kRaw4, t, TransposeAccess::scalar).registers, 16);
  const auto small = copy_kernel(Element(8, Element::Kind::integer, "raw"), CopyTile{256, 1, 2, false, false, true},
                                 TransposeAccess::scalar);
  EXPECT_EQ(small.registers, 4);
  EXPECT_EQ(small.shared_bytes, 256 * 8);
}

TEST(CopyKernel, BadTilesAreClearErrors) {
  std::string e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{3, 4, 8}, TransposeAccess::vectors); });
  EXPECT_NE(e.find("powers of two"), std::string::npos) << e;
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{4096, 1, 8}, TransposeAccess::vectors); });
  EXPECT_NE(e.find("holds 1 to 512 4-element vectors along it"), std::string::npos) << e;
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{2, 4, 8}, TransposeAccess::vectors); });
  EXPECT_NE(e.find("holds 1 to 512 4-element vectors along it"), std::string::npos) << e;
  // 8 vectors along the run a lane, 4 rows: 32 vectors a thread.
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{1024, 4, 8}, TransposeAccess::vectors); });
  EXPECT_NE(e.find("gives a thread 32 vectors, over 16"), std::string::npos) << e;
  // Flat tiles: destination words only, one row, 1 to 16 words a thread.
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{4096, 1, 8, true}, TransposeAccess::vectors); });
  EXPECT_NE(e.find("flat copy tiles move destination words: realigned access only, not vectors"), std::string::npos) << e;
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{4096, 2, 8, true}, TransposeAccess::realigned); });
  EXPECT_NE(e.find("a flat copy tile of 1024 words, 2 rows and 8 warps"), std::string::npos) << e;
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{1 << 16, 1, 8, true}, TransposeAccess::realigned); });
  EXPECT_NE(e.find("1 to 16 words a thread"), std::string::npos) << e;  // 64 a thread
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{256, 1, 8, true}, TransposeAccess::realigned); });
  EXPECT_NE(e.find("a flat copy tile of 64 words"), std::string::npos) << e;  // under a word a thread
  // Wide tiles: 2-D destination words only.
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{128, 4, 8, false, true}, TransposeAccess::vectors); });
  EXPECT_NE(e.find("wide copy tiles (64-bit row arithmetic) are 2-D destination words only, not vectors"),
            std::string::npos) << e;
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{4096, 1, 8, true, true}, TransposeAccess::realigned); });
  EXPECT_NE(e.find("2-D destination words only, not flat tiles"), std::string::npos) << e;
  // Exchanged tiles: scalar access, one row, 4 to 16 elements a thread.
  const CopyTile x2048{2048, 1, 8, false, false, true}, x2048r2{2048, 2, 8, false, false, true};
  e = axe::test::error_of([&] { copy_kernel(kRaw4, x2048, TransposeAccess::realigned); });
  EXPECT_NE(e.find("exchanged copy tiles take one element an access (scalar), not realigned"), std::string::npos) << e;
  e = axe::test::error_of([&] { copy_kernel(kRaw4, x2048r2, TransposeAccess::scalar); });
  EXPECT_NE(e.find("an exchanged copy tile of 2048 elements, 2 rows and 8 warps: one row, 4 to 16 elements a thread "
                   "(1024 to 4096)"),
            std::string::npos) << e;
  e = axe::test::error_of([] { copy_kernel(kRaw4, CopyTile{512, 1, 8, false, false, true}, TransposeAccess::scalar); });
  EXPECT_NE(e.find("an exchanged copy tile of 512 elements"), std::string::npos) << e;  // 2 a thread
  const CopyTile x8192{8192, 1, 8, false, false, true};
  e = axe::test::error_of([&] { copy_kernel(kRaw4, x8192, TransposeAccess::scalar); });
  EXPECT_NE(e.find("an exchanged copy tile of 8192 elements"), std::string::npos) << e;  // 32 a thread
  const Element e3(3, Element::Kind::integer, "raw");
  e = axe::test::error_of([&] { copy_kernel(e3, CopyTile{}, TransposeAccess::scalar); });
  EXPECT_NE(e.find("not 1, 2, 4 or 8 bytes"), std::string::npos) << e;
}

}  // namespace
}  // namespace axe::test::codegen
