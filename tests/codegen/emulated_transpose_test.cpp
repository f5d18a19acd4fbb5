// Generated transpose kernels run on the host (tests/codegen/emulator): each kernel's source is
// compiled with the host C++ compiler against a shim of the CUDA subset it uses (a std::thread per
// CUDA thread, std::barrier for __syncthreads), run on a matrix whose tiles are full and cut, and
// checked against a plain transposition, bytes outside the destination rows included. So the
// generated code is checked for what it computes without a GPU (the CUDA tests check it on one).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "axe/codegen/transpose_codegen.hpp"
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
  const std::filesystem::path src = dir / ("kernel" + std::to_string(n) + ".cu"),
                              bin = dir / ("kernel" + std::to_string(n)), log = dir / ("kernel" + std::to_string(n) + ".log");
  std::ofstream(src) << k.source;
  const std::string emulator = std::string(AXE_SOURCE_DIR) + "/tests/codegen/emulator";
  const std::string compile = std::string("\"") + AXE_HOST_CXX + "\" -std=c++20 -O1 -w -pthread -I\"" + emulator +
                              "\" -DES=" + std::to_string(c.es) + " '-DKERNEL=\"" + src.string() + "\"' \"" +
                              emulator + "/transpose_main.cpp\" -o \"" + bin.string() + "\" > \"" + log.string() +
                              "\" 2>&1";
  if (std::system(compile.c_str()) != 0) {
    std::ifstream l(log);
    return "the host compiler failed: " + std::string(std::istreambuf_iterator<char>(l), {});
  }
  const std::string run = "\"" + bin.string() + "\" " + std::to_string(c.B) + " " + std::to_string(c.A) + " " +
                          std::to_string(c.sb) + " " + std::to_string(c.da) + " " + std::to_string(c.soff) + " " +
                          std::to_string(c.doff) + " " + std::to_string(k.threads) + " " + std::to_string(k.tile.a) +
                          " " + std::to_string(k.tile.b) + " > \"" + log.string() + "\" 2>&1";
  const int rc = std::system(run.c_str());
  std::ifstream l(log);
  const std::string out(std::istreambuf_iterator<char>(l), {});
  return rc == 0 && out.find("0 mismatches") != std::string::npos ? "" : "exit " + std::to_string(rc) + ": " + out;
}

// Every element size with the runtime's tiles (vectors on rows that are whole 16-byte vectors,
// one element per access on rows at odd offsets), and for 1- and 2-byte elements packed
// registers, 8-byte vectors and a small tile; the matrices leave cut tiles on both sides.
TEST(EmulatedTranspose, GeneratedKernelsTransposeOnTheHost) {
  const auto dir = std::filesystem::temp_directory_path() / ("axe_emulated_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  std::vector<Case> cases;
  for (std::int64_t es : {1, 2, 4, 8}) {
    const long long v = 16 / es, B = (150 + v - 1) / v * v, A = (210 + v - 1) / v * v;  // whole vectors
    const TransposeTile vt = axe::codegen::default_transpose_tile(es, TransposeAccess::vectors);
    const TransposeTile st = axe::codegen::default_transpose_tile(es, TransposeAccess::scalar);
    cases.push_back({es, vt, TransposeAccess::vectors, B, A, A + 2 * v, B + v, v, 0});
    cases.push_back({es, st, TransposeAccess::scalar, 301, 77, 79, 303, 1, 1});
    if (es <= 2) {
      TransposeTile packed = vt;
      packed.packed = true;
      cases.push_back({es, packed, TransposeAccess::vectors, 150, 208, 208, 160, 0, 0});
      cases.push_back({es, TransposeTile{64, 64, 2, false, 16, true}, TransposeAccess::vectors, 100, 96, 96, 112, 16, 0});
      cases.push_back({es, TransposeTile{128, 64, 8, false, 8, true}, TransposeAccess::vectors, 70, 136, 136, 72, 0, 8});
    }
  }
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(name_of(c));
    EXPECT_EQ(run_case(c, dir, n++), "");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace axe::test::codegen
