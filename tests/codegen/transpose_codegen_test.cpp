// The runtime's transpose as a generated tile conversion (include/axe/codegen/transpose_codegen.hpp):
// the kernel's layouts, buffers and paths for hand-derived tiles, and bad tiles. That the kernels
// compile is tests/cuda/generated_kernels_test.cpp; that they transpose, Kernels.Transform* there.
#include "axe/codegen/transpose_codegen.hpp"
#include "codegen/global_access.hpp"

#include <gtest/gtest.h>

#include <string>

#include "axe/core/error.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "axe/linear/bridge.hpp"
#include "linear/linear_test_util.hpp"
#include "support/test_support.hpp"

namespace axe::test::codegen {
namespace {

using namespace axe::codegen;

using axe::test::count_of;

// 32 x 64 f32 tiles, 4 warps, 4-element vectors: the source holds 4 consecutive a per thread, 16
// lanes across a and 2 down b, 4 warps down b (8 rows), 4 repetitions: 16 registers = 4 vectors
// per thread; the destination 4 consecutive b, 8 lanes down b, 4 across a, warps across a (16
// columns), 4 repetitions: 4 vectors. Two 8 KiB buffers.
TEST(TransposeKernel, F32_32x64_ByHand) {
  const Element e(4, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(e, TransposeTile{64, 32, 4}, TransposeAccess::vectors);
  EXPECT_EQ(k.threads, 128);
  EXPECT_EQ(k.vector, 4);
  EXPECT_EQ(k.shared_bytes, 2 * 32 * 64 * 4);
  EXPECT_EQ(k.plan.mechanism, axe::linear::Mechanism::shared);
  EXPECT_EQ(k.plan.src_registers, 16);
  EXPECT_EQ(k.plan.dst_registers, 16);
  // The full path: 4 vector loads and 4 vector stores per thread.
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<const uint4*>(p + base"), 4) << k.source;
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<uint4*>(p + base"), 4) << k.source;
  // The edge path: one predicated access per register on each side.
  EXPECT_EQ(count_of(k.source, " < xlim && ty + "), 32) << k.source;
  EXPECT_EQ(count_of(k.source, "smem + (parity ? 8192u : 0u)"), 1);
}

// Without vectors every access is one element.
TEST(TransposeKernel, ScalarHasNoVectors) {
  const Element e(2, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(e, TransposeTile{64, 64, 4}, TransposeAccess::scalar);
  EXPECT_EQ(k.vector, 1);
  EXPECT_EQ(k.block, 1);
  EXPECT_EQ(count_of(k.source, "uint4*>(p"), 0);
}

// The tile order: tile t of tiles_a x tiles_b is (t % tiles_a, t / tiles_a) along a first, and
// (t / tiles_b, t % tiles_b) along b first; the tile's shape and the thread layouts are the same.
TEST(TransposeKernel, TilesAlongBFirst) {
  const Element e(2, Element::Kind::integer, "raw");
  const auto a = transpose_kernel(e, TransposeTile{32, 128, 4}, TransposeAccess::scalar);
  const auto b = transpose_kernel(e, TransposeTile{32, 128, 4, true}, TransposeAccess::scalar);
  EXPECT_NE(a.source.find("a0 = (t % d.tiles_a) * 32ll, b0 = (t / d.tiles_a) * 128ll;"), std::string::npos);
  EXPECT_NE(b.source.find("a0 = (t / d.tiles_b) * 32ll, b0 = (t % d.tiles_b) * 128ll;"), std::string::npos);
  EXPECT_EQ(b.source.find("t % d.tiles_a"), std::string::npos);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.shared_bytes, b.shared_bytes);
  EXPECT_EQ(a.plan.counts.shared_bytes, b.plan.counts.shared_bytes);
}

// A device with less shared memory than the default tile needs gets a smaller tile. By hand: f32
// with vectors defaults to 64 x 64 (b x a), 4 warps, two buffers of 16 KiB; under 24 KiB, a (the
// first of two equal extents) is halved: 64 x 32, two buffers of 8 KiB. The laws, for every element size,
// access and a range of limits: the kernel of the tile is valid and fits, the default comes back
// when it fits, and the tile is never larger than the default nor in another order.
TEST(TransposeKernel, FitTileShrinksToTheSharedLimit) {
  const Element f32(4, Element::Kind::integer, "raw");
  const TransposeTile t = fit_transpose_tile(f32, default_transpose_tile(4, TransposeAccess::vectors),
                                             TransposeAccess::vectors, 24 * 1024);
  EXPECT_EQ(t.a, 32);
  EXPECT_EQ(t.b, 64);
  EXPECT_EQ(t.warps, 4);
  EXPECT_EQ(t.vector_bytes, 8);
  EXPECT_EQ(transpose_kernel(f32, t, TransposeAccess::vectors).shared_bytes, 2 * 64 * 32 * 4);
  for (std::int64_t es : {1, 2, 4, 8}) {
    const Element e(es, Element::Kind::integer, "raw");
    for (auto access : {TransposeAccess::vectors, TransposeAccess::realigned, TransposeAccess::scalar}) {
      const TransposeTile def = default_transpose_tile(es, access);
      const std::int64_t need = transpose_kernel(e, def, access).shared_bytes;
      for (std::int64_t limit : {16 * 1024, 48 * 1024, 100 * 1024, 232448}) {
        SCOPED_TRACE(std::to_string(es) + " bytes, " + std::string(to_string(access)) + ", " + std::to_string(limit));
        const TransposeTile f = fit_transpose_tile(e, def, access, limit);
        EXPECT_LE(transpose_kernel(e, f, access).shared_bytes, limit);
        if (need <= limit) {
          EXPECT_TRUE(f.a == def.a && f.b == def.b && f.warps == def.warps);
        }
        EXPECT_LE(f.a, def.a);
        EXPECT_LE(f.b, def.b);
        EXPECT_LE(f.warps, def.warps);
        EXPECT_EQ(f.b_first, def.b_first);
      }
    }
  }
  // Small tiles convert within a warp, by shuffles, without shared memory: 100 bytes still fit.
  const TransposeTile tiny = fit_transpose_tile(f32, TransposeTile{64, 64, 4}, TransposeAccess::vectors, 100);
  EXPECT_LE(transpose_kernel(f32, tiny, TransposeAccess::vectors).shared_bytes, 100);
  linear::expect_error([&] { fit_transpose_tile(f32, TransposeTile{64, 64, 4}, TransposeAccess::vectors, -1); },
                       "fits -1 bytes of shared memory");
}

// 128 x 64 u8 tiles (b x a), 4 warps: each thread holds a 4 x 16 square on both sides (source: 4
// rows of b by 16 consecutive a, 4 lanes across a, 8 down b, 4 warps down b; destination: 16
// consecutive b by 4 columns of a, 8 lanes down b, 4 across a, warps across a): 64 registers, 4
// vectors each way. Both shared accesses are then 16-byte vectors of whole 4-byte words: each
// warp instruction moves 512 bytes, 4 wavefronts, and the 8192-byte tile needs 16 instructions
// per side, 64 wavefronts each, the bound. (Without the squares the loads were single bytes:
// 128 wavefronts for a 4096-byte tile.)
TEST(TransposeKernel, U8SquaresMoveWordsThroughShared) {
  const Element e(1, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(e, TransposeTile{64, 128, 4}, TransposeAccess::vectors);
  EXPECT_EQ(k.vector, 16);
  EXPECT_EQ(k.block, 4);
  EXPECT_EQ(k.plan.src_registers, 64);
  EXPECT_EQ(k.plan.dst_registers, 64);
  EXPECT_EQ(k.plan.counts.store_wavefronts, 64);
  EXPECT_EQ(k.plan.counts.load_wavefronts, 64);
  EXPECT_EQ(k.plan.counts.store_instructions, 4);
  EXPECT_EQ(k.plan.counts.load_instructions, 4);
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<const uint4*>(p + base"), 4) << k.source;
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<uint4*>(p + base"), 4) << k.source;
}

// 16-bit: 2 x 8 squares; 64 x 64 with 4 warps holds 32 registers, 4 vectors; 64 wavefronts per
// side for the 8192-byte tile.
TEST(TransposeKernel, F16SquaresMoveWordsThroughShared) {
  const Element e(2, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(e, TransposeTile{64, 64, 4}, TransposeAccess::vectors);
  EXPECT_EQ(k.block, 2);
  EXPECT_EQ(k.plan.src_registers, 32);
  EXPECT_EQ(k.plan.counts.store_wavefronts, 64);
  EXPECT_EQ(k.plan.counts.load_wavefronts, 64);
}

// Realigned full tiles (32 x 64 f32: 4 vectors each way): two words loaded per vector, one
// shuffled word per vector stored (8 lanes down b), aligned 16-byte accesses only, the row ends
// in pieces; the edge path is still one element per register (32 per side).
TEST(TransposeKernel, RealignedSharesWordsWithTheNeighbourLane) {
  const Element e(4, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(e, TransposeTile{64, 32, 4}, TransposeAccess::realigned);
  EXPECT_EQ(k.access, TransposeAccess::realigned);
  EXPECT_EQ(k.vector, 4);
  for (const char* v : {"0", "1", "2", "3"}) {
    SCOPED_TRACE(v);
    // Both words of each vector, all loads before the first use; the first lane of each row
    // writes the head's pieces.
    EXPECT_EQ(count_of(k.source, std::string("const uint4 lo") + v + " = "), 1) << k.source;
    EXPECT_EQ(count_of(k.source, std::string("const uint4 hi") + v + " = "), 1) << k.source;
    EXPECT_EQ(count_of(k.source, std::string("if (first && sh") + v + ") axe_store_part<true>"), 1);
  }
  EXPECT_LT(k.source.find("const uint4 hi3 ="), k.source.find("u.v = sh0 == 0u ? lo0"));
  EXPECT_EQ(count_of(k.source, "uint4 prev = axe_shfl_up16(u.v, 8)"), 4) << k.source;  // 8 lanes down b
  EXPECT_EQ(count_of(k.source, " < xlim && ty + "), 32) << k.source;
  EXPECT_EQ(count_of(k.source, "uint4*>(p + base"), 0);  // no access at the unaligned address itself
}

// 8-byte vectors, u8 64 x 128 (b x a), 8 warps: squares of 4 rows by 8 bytes (vector 8, block 4),
// 64 * 128 / 256 = 32 registers, so 4 vectors each way, each an 8-byte access (uint2) on both
// global sides; 16 lanes along a 128-byte tile row. 4-byte vectors of u8: 4 x 4 squares.
TEST(TransposeKernel, NarrowerVectorsMakeSmallerSquares) {
  const Element e(1, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(e, TransposeTile{128, 64, 8, false, 8}, TransposeAccess::vectors);
  EXPECT_EQ(k.vector, 8);
  EXPECT_EQ(k.block, 4);
  EXPECT_EQ(k.plan.src_registers, 32);
  EXPECT_EQ(k.plan.dst_registers, 32);
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<const uint2*>(p + base"), 4) << k.source;
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<uint2*>(p + base"), 4) << k.source;
  EXPECT_EQ(count_of(k.source, "uint4*>(p + base"), 0);
  const auto w = transpose_kernel(e, TransposeTile{64, 64, 4, false, 4}, TransposeAccess::vectors);
  EXPECT_EQ(w.vector, 4);
  EXPECT_EQ(w.block, 4);
  EXPECT_EQ(count_of(w.source, "reinterpret_cast<const unsigned int*>(p + base"), 8) << w.source;
  // Scalar and realigned accesses ignore vector_bytes.
  EXPECT_EQ(transpose_kernel(e, TransposeTile{32, 256, 8, true, 8}, TransposeAccess::scalar).source,
            transpose_kernel(e, TransposeTile{32, 256, 8, true}, TransposeAccess::scalar).source);
}

// Packed registers: the word expressions by hand (__byte_perm(x, y, s): byte n of the result is
// byte s >> 4n & 7 of y:x).
TEST(PackedRegisters, WordsAssembleByBytePermutes) {
  using axe::codegen::internal::assemble_word;
  using axe::codegen::internal::ElementSource;
  // Elements 4..7 of r, in order: word 1 itself.
  EXPECT_EQ(assemble_word({{"r", 4}, {"r", 5}, {"r", 6}, {"r", 7}}, 1), "r[1]");
  // 2-byte elements a[0] (bytes 0, 1 of a[0]) and b[1] (bytes 2, 3 of b[0]): 0, 1, 4 + 2, 4 + 3.
  EXPECT_EQ(assemble_word({{"a", 0}, {"b", 1}}, 2), "__byte_perm(a[0], b[0], 0x7610u)");
  // A missing element is zero: bytes 2, 3 are byte 0 of 0u.
  EXPECT_EQ(assemble_word({{"a", 0}, {}}, 2), "__byte_perm(a[0], 0u, 0x4410u)");
  // Byte 0 of four words (a 4 x 4 byte transpose's column): two pairs, then their low halves.
  EXPECT_EQ(assemble_word({{"a", 0}, {"b", 4}, {"c", 8}, {"d", 12}}, 1),
            "__byte_perm(__byte_perm(a[0], b[1], 0x40u), __byte_perm(c[2], d[3], 0x40u), 0x5410u)");
}

// u8 128 x 64 (b x a), 4 warps, vectors, packed: 64 elements a thread in 16 words on both sides;
// the global vectors move whole words, and each destination word of the 4 x 4 byte transposes
// takes three byte permutes (16 words: 48). f16 128 x 128: 128 halves in 64 words, each
// destination word from two source words (one permute).
TEST(PackedRegisters, TransposeKernelsHoldFourBytesARegister) {
  const Element u8(1, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(u8, TransposeTile{128, 64, 4, false, 16, true}, TransposeAccess::vectors);
  EXPECT_TRUE(k.packed);
  EXPECT_EQ(count_of(k.source, "unsigned r[16], w[16];"), 1) << k.source;
  EXPECT_EQ(count_of(k.source, "unsigned char r["), 0);
  EXPECT_EQ(count_of(k.source, "__byte_perm("), 48) << k.source;
  EXPECT_EQ(count_of(k.source, "reinterpret_cast<const uint4*>(p + base"), 4);
  const Element f16(2, Element::Kind::integer, "raw");
  const auto h = transpose_kernel(f16, TransposeTile{128, 128, 4, false, 16, true}, TransposeAccess::vectors);
  EXPECT_EQ(count_of(h.source, "unsigned r[64], w[64];"), 1) << h.source;
  EXPECT_EQ(count_of(h.source, "__byte_perm("), 64) << h.source;
  // Unpacked, the same tile holds an element a register.
  EXPECT_EQ(count_of(transpose_kernel(u8, TransposeTile{128, 64, 4}, TransposeAccess::vectors).source,
                     "unsigned char r[64], w[64];"),
            1);
  // The conversions packed registers take: the transposes' shared round trip; not a warp-level
  // plan of the same tile (its shuffles move single elements), nor 4-byte elements.
  EXPECT_TRUE(axe::codegen::packable(k.plan, 1));
  EXPECT_FALSE(axe::codegen::packable(k.plan, 4));
  axe::linear::ConvertOptions warp_level;
  warp_level.element_bytes = 1;
  warp_level.choice = axe::linear::ConvertOptions::Choice::shuffles;
  using V = std::vector<std::int64_t>;
  const V tile{32, 32}, row{1, 4}, col{4, 1}, lanes_row{4, 8}, lanes_col{8, 4}, one_warp{1, 1}, rm{1, 0}, cm{0, 1};
  const auto shuffles = axe::linear::plan_conversion(
      axe::linear::from_linear(axe::linear::blocked_layout(tile, row, lanes_row, one_warp, rm)).layout,
      axe::linear::from_linear(axe::linear::blocked_layout(tile, col, lanes_col, one_warp, cm)).layout, tile, warp_level);
  EXPECT_EQ(shuffles.mechanism, axe::linear::Mechanism::shuffles);
  EXPECT_FALSE(axe::codegen::packable(shuffles, 1));
  // Packed registers are for vectors of elements under 4 bytes.
  const Element f32(4, Element::Kind::integer, "raw");
  linear::expect_error([&] { transpose_kernel(f32, TransposeTile{64, 128, 4, false, 16, true}, TransposeAccess::vectors); },
                       "packed registers take vectors of 1- or 2-byte elements");
  linear::expect_error([&] { transpose_kernel(u8, TransposeTile{32, 256, 8, true, 16, true}, TransposeAccess::scalar); },
                       "(1-byte elements, scalar)");
}

TEST(TransposeKernel, BadTilesAreErrors) {
  const Element e(1, Element::Kind::integer, "raw");
  const auto vectors = TransposeAccess::vectors;
  linear::expect_error([&] { transpose_kernel(e, TransposeTile{48, 64, 4}, vectors); }, "powers of two");
  // 8 x 8 bytes cannot give 4 warps a 16-byte vector each.
  linear::expect_error([&] { transpose_kernel(e, TransposeTile{8, 8, 4}, vectors); }, "too small");
  // 64 x 64 bytes hold 4096 elements: 4 warps of 4 x 16 squares need 8192.
  linear::expect_error([&] { transpose_kernel(e, TransposeTile{64, 64, 4}, vectors); }, "too small");
  // Vectors of 2 or 32 bytes, or narrower than an element.
  linear::expect_error([&] { transpose_kernel(e, TransposeTile{64, 64, 4, false, 2}, vectors); },
                       "transpose vectors of 2 bytes: 4, 8 or 16 bytes");
  linear::expect_error([&] { transpose_kernel(e, TransposeTile{64, 64, 4, false, 32}, vectors); }, "of 32 bytes");
  const Element f64(8, Element::Kind::integer, "raw");
  linear::expect_error([&] { transpose_kernel(f64, TransposeTile{64, 64, 4, false, 4}, vectors); },
                       "at least an element (8 bytes)");
  // A realigned row of 1024 bytes would need 64 lanes.
  linear::expect_error([&] { transpose_kernel(e, TransposeTile{1024, 64, 4}, TransposeAccess::realigned); },
                       "more than 32");
}

}  // namespace
}  // namespace axe::test::codegen
