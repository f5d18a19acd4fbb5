// Generated box copies run on the host emulator (tests/codegen/emulator, copy_main.cpp): each
// kernel of codegen::copy_kernel copies a table of two boxes (one from each source, one with a
// batch mode), its tiles walked by a grid of a few CTAs so that each CTA moves tiles of both boxes,
// checked against a plain copy, every destination element outside the boxes included. Built with
// AddressSanitizer where the host compiler has it, with the sources allocated to the byte their
// boxes reach: a read past a box's source span (the realigned words read whole words only within
// it) fails the test. The CUDA tests check the same kernels on a GPU (Kernels.CopyGenerated_*).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "axe/codegen/copy_codegen.hpp"
#include "codegen/global_access.hpp"
#include "codegen/emulator/emulate.hpp"
#include "support/test_support.hpp"

namespace axe::test::codegen {
namespace {

using axe::codegen::CopyTile;
using axe::codegen::Element;
using axe::codegen::TransposeAccess;

struct Box {
  long long A, B, sb, db, soff, doff, source, n = 1, ns = 0, nd = 0;
};

struct Case {
  std::int64_t es;
  CopyTile tile;
  TransposeAccess access;
  std::vector<Box> boxes;
};

std::string name_of(const Case& c) {
  return std::to_string(c.es) + "-byte " + std::string(to_string(c.access)) + " a=" + std::to_string(c.tile.a) + " " +
         std::to_string(c.tile.rows) + "x" + std::to_string(c.tile.warps) + (c.tile.flat ? " flat" : "") +
         (c.tile.wide ? " wide" : "") + (c.tile.exchange ? " exchange" : "");
}

std::string run_case(const Case& c, const std::filesystem::path& dir, int n) {
  const auto k = axe::codegen::copy_kernel(Element(c.es, Element::Kind::integer, "raw"), c.tile, c.access);
  std::string args = std::to_string(k.threads) + " " + std::to_string(k.tile_a) + " " + std::to_string(k.tile_b) + " " +
                     (c.tile.flat ? "2 " : c.access == TransposeAccess::realigned ? "1 " : "0 ") +
                     std::to_string(16 / c.es) + " 3";
  for (const Box& b : c.boxes) {
    for (long long x : {b.A, b.B, b.sb, b.db, b.soff, b.doff, b.source, b.n, b.ns, b.nd}) args += " " + std::to_string(x);
  }
  return emulator::compile_and_run(dir, "copy" + std::to_string(n), k.source, "copy_main.cpp", c.es, args,
                                   emulator::sanitizer_flags(dir));
}

// Every element size, the runtime's default tiles and tiles wider than a warp's vectors (lanes,
// then registers along the run). Vectors: offsets and strides whole 16-byte vectors, runs that
// cut vectors and tiles. Scalar and realigned: offsets and strides at odd elements.
TEST(EmulatedCopy, GeneratedCopiesMoveTheirBoxesOnTheHost) {
  const emulator::TempDir dir;
  std::vector<Case> cases;
  for (std::int64_t es : {1, 2, 4, 8}) {
    const long long v = 16 / es;
    // Vectors: a run of 300 vectors and a bit (three tiles of 128 vectors), 11 rows, a batch of 3;
    // a short second box.
    const long long A1 = 300 * v + v / 2 + 1, sb1 = 302 * v, db1 = 301 * v;
    const std::vector<Box> aligned{{A1, 11, sb1, db1, v, 0, 0, 3, 12 * sb1, 11 * db1},
                                   {3 * v, 5, 4 * v, 3 * v, 0, 3 * 11 * db1, 1}};
    // Unaligned: a run of 2400 bytes and an element (151 words: three tiles of 64), at odd offsets
    // and pitches, a batch of 2; a second box from src2.
    const long long A2 = 2400 / es + 1, sb2 = A2 + 33, db2 = A2 + 1;
    const std::vector<Box> odd{{A2, 13, sb2, db2, 1, 3, 0, 2, 13 * sb2 + 5, 13 * db2},
                               {77, 6, 79, 77, 5, 2 * 13 * db2 + 7, 1}};
    auto add = [&](CopyTile t, TransposeAccess a, const std::vector<Box>& boxes) { cases.push_back({es, t, a, boxes}); };
    add(axe::codegen::default_copy_tile(es, TransposeAccess::vectors, A1), TransposeAccess::vectors, aligned);
    add(CopyTile{128 * v, 1, 4}, TransposeAccess::vectors, aligned);  // 4 vectors along the run a lane
    add(axe::codegen::default_copy_tile(es, TransposeAccess::realigned, 77), TransposeAccess::realigned, odd);
    add(CopyTile{64 * v, 2, 2}, TransposeAccess::realigned, odd);  // 2 words along the run a lane, 2 rows
    // The same two in 64-bit row arithmetic (wide, as for rows of 2^31 - 64 bytes or more).
    CopyTile wide = axe::codegen::default_copy_tile(es, TransposeAccess::realigned, 77);
    wide.wide = true;
    add(wide, TransposeAccess::realigned, odd);
    add(CopyTile{64 * v, 2, 2, false, true}, TransposeAccess::realigned, odd);
    // Flat words: 4 a thread (1024-word tiles, each over several rows of the first box and the
    // whole second box, rows of 6 to 151 words), and 1 a thread on 2 warps (64-word tiles, a row
    // of the first box over three tiles).
    add(CopyTile{1024 * v, 1, 8, true}, TransposeAccess::realigned, odd);
    add(CopyTile{64 * v, 1, 2, true}, TransposeAccess::realigned, odd);
    add(axe::codegen::default_copy_tile(es, TransposeAccess::scalar, 77), TransposeAccess::scalar, odd);
    add(CopyTile{256, 1, 4}, TransposeAccess::scalar, odd);  // 8 elements along the run a lane
    // Exchanged tiles: 4 and 16 elements a thread on 2 warps (the first box's rows over 3 and 1
    // tiles). The 4-byte plan loads shared memory with ldmatrix, which the emulator does not run:
    // those run on a GPU (Kernels.CopyGenerated_*).
    if (es != 4) {
      add(CopyTile{256, 1, 2, false, false, true}, TransposeAccess::scalar, odd);
      add(CopyTile{1024, 1, 2, false, false, true}, TransposeAccess::scalar, odd);
    }
  }
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(name_of(c));
    EXPECT_EQ(run_case(c, dir.path, n++), "");
  }
}

// The flat tiles' division of a word by its row's words (axe_row_of_word: a float estimate and one
// correction) against integer division, rows of 1 to 2^27 - 1 words (emulator/row_of_word_main.cpp).
TEST(EmulatedCopy, RowOfWordMatchesIntegerDivision) {
  const emulator::TempDir dir;
  EXPECT_EQ(emulator::compile_and_run(dir.path, "row_of_word", axe::codegen::internal::kFlatWordHelpers,
                                      "row_of_word_main.cpp", 1, ""),
            "");
}

}  // namespace
}  // namespace axe::test::codegen
