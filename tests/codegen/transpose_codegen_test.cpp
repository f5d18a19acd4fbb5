// The runtime's transpose as a generated tile conversion (include/axe/codegen/transpose_codegen.hpp):
// the kernel's layouts, buffers and paths for hand-derived tiles, and bad tiles. That the kernels
// compile is tests/cuda/generated_kernels_test.cpp; that they transpose, Kernels.Transform* there.
#include "axe/codegen/transpose_codegen.hpp"

#include <gtest/gtest.h>

#include <string>

#include "axe/core/error.hpp"
#include "linear/linear_test_util.hpp"

namespace axe::test::codegen {
namespace {

using namespace axe::codegen;

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

// 32 x 64 f32 tiles, 4 warps, 4-element vectors: the source holds 4 consecutive a per thread, 16
// lanes across a and 2 down b, 4 warps down b (8 rows), 4 repetitions: 16 registers = 4 vectors
// per thread; the destination 4 consecutive b, 8 lanes down b, 4 across a, warps across a (16
// columns), 4 repetitions: 4 vectors. Two 8 KiB buffers.
TEST(TransposeKernel, F32_32x64_ByHand) {
  const Element e(4, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(e, TransposeTile{64, 32, 4}, true);
  EXPECT_EQ(k.threads, 128);
  EXPECT_EQ(k.vector, 4);
  EXPECT_EQ(k.shared_bytes, 2 * 32 * 64 * 4);
  EXPECT_EQ(k.plan.mechanism, axe::linear::Mechanism::shared);
  EXPECT_EQ(k.plan.src_registers, 16);
  EXPECT_EQ(k.plan.dst_registers, 16);
  // The full path: 4 vector loads and 4 vector stores per thread.
  EXPECT_EQ(count(k.source, "reinterpret_cast<const uint4*>(p + base"), 4) << k.source;
  EXPECT_EQ(count(k.source, "reinterpret_cast<uint4*>(p + base"), 4) << k.source;
  // The edge path: one predicated access per register on each side.
  EXPECT_EQ(count(k.source, " < xlim && ty + "), 32) << k.source;
  EXPECT_EQ(count(k.source, "smem + (parity ? 8192u : 0u)"), 1);
}

// Without vectors every access is one element.
TEST(TransposeKernel, ScalarHasNoVectors) {
  const Element e(2, Element::Kind::integer, "raw");
  const auto k = transpose_kernel(e, TransposeTile{64, 64, 4}, false);
  EXPECT_EQ(k.vector, 1);
  EXPECT_EQ(count(k.source, "uint4*>(p"), 0);
}

TEST(TransposeKernel, BadTilesAreErrors) {
  const Element e(1, Element::Kind::integer, "raw");
  linear::expect_error([&] { transpose_kernel(e, TransposeTile{48, 64, 4}, true); }, "powers of two");
  // 8 x 8 bytes cannot give 4 warps a 16-byte vector each.
  linear::expect_error([&] { transpose_kernel(e, TransposeTile{8, 8, 4}, true); }, "too small");
}

}  // namespace
}  // namespace axe::test::codegen
