// Generated transpose kernels run on the host (tests/codegen/emulator): each kernel's source is
// compiled with the host C++ compiler against a shim of the CUDA subset it uses (a std::thread per
// CUDA thread, std::barrier for __syncthreads), run on a matrix whose tiles are full and cut, and
// checked against a plain transposition, bytes outside the destination rows included. So the
// generated code is checked for what it computes without a GPU (the CUDA tests check it on one).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "axe/codegen/transpose_codegen.hpp"
#include "codegen/emulator/emulate.hpp"
#include "support/test_support.hpp"

namespace axe::test::codegen {
namespace {

using axe::codegen::Element;
using axe::codegen::TransposeAccess;
using axe::codegen::TransposeTile;

struct Case {
  std::int64_t es;
  TransposeTile tile;
  TransposeAccess access;
  long long B, A, sb, da, soff, doff;  // source rows of A elements at pitch sb; destination pitch da
};

std::string name_of(const Case& c) {
  return std::to_string(c.es) + "-byte " + std::string(to_string(c.access)) + " " + std::to_string(c.tile.b) + "x" +
         std::to_string(c.tile.a) + " w" + std::to_string(c.tile.warps) + (c.tile.b_first ? " b-first" : "") +
         (c.tile.vector_bytes != 16 ? " v" + std::to_string(c.tile.vector_bytes) : "") +
         (c.tile.packed ? " packed" : "");
}

// Compiles and runs one case; "" when it ran and matched, else what happened.
std::string run_case(const Case& c, const std::filesystem::path& dir, int n) {
  const auto k = axe::codegen::transpose_kernel(Element(c.es, Element::Kind::integer, "raw"), c.tile, c.access);
  return emulator::compile_and_run(dir, "transpose" + std::to_string(n), k.source, "transpose_main.cpp", c.es,
                                   std::to_string(c.B) + " " + std::to_string(c.A) + " " + std::to_string(c.sb) + " " +
                                       std::to_string(c.da) + " " + std::to_string(c.soff) + " " +
                                       std::to_string(c.doff) + " " + std::to_string(k.threads) + " " +
                                       std::to_string((c.A + k.tile.a - 1) / k.tile.a) + " " +
                                       std::to_string((c.B + k.tile.b - 1) / k.tile.b));
}

// Every element size with the runtime's tiles (vectors on rows that are whole 16-byte vectors,
// one element per access on rows at odd offsets, and realigned words there, forced), and for 1-
// and 2-byte elements the default's other register form (packed or one element a register),
// 8-byte vectors and a small tile; the matrices leave cut tiles on both sides.
TEST(EmulatedTranspose, GeneratedKernelsTransposeOnTheHost) {
  const emulator::TempDir dir;
  std::vector<Case> cases;
  for (std::int64_t es : {1, 2, 4, 8}) {
    const long long v = 16 / es, B = (150 + v - 1) / v * v, A = (210 + v - 1) / v * v;  // whole vectors
    const TransposeTile vt = axe::codegen::default_transpose_tile(es, TransposeAccess::vectors);
    const TransposeTile st = axe::codegen::default_transpose_tile(es, TransposeAccess::scalar);
    cases.push_back({es, vt, TransposeAccess::vectors, B, A, A + 2 * v, B + v, v, 0});
    cases.push_back({es, st, TransposeAccess::scalar, 301, 77, 79, 303, 1, 1});
    const TransposeTile rt = axe::codegen::default_transpose_tile(es, TransposeAccess::realigned);
    cases.push_back({es, rt, TransposeAccess::realigned, 301, 277, 279, 303, 1, 3});
    if (es <= 2) {
      TransposeTile other = vt;  // packed registers for 2 bytes, one element a register for 1
      other.packed = !vt.packed;
      cases.push_back({es, other, TransposeAccess::vectors, 150, 208, 208, 160, 0, 0});
      cases.push_back({es, TransposeTile{64, 64, 2, false, 16, true}, TransposeAccess::vectors, 100, 96, 96, 112, 16, 0});
      cases.push_back({es, TransposeTile{128, 64, 8, false, 8, true}, TransposeAccess::vectors, 70, 136, 136, 72, 0, 8});
    }
  }
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(name_of(c));
    EXPECT_EQ(run_case(c, dir.path, n++), "");
  }
}

}  // namespace
}  // namespace axe::test::codegen
