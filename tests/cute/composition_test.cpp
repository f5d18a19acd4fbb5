// composition: R = A o B with R(c) == A(B(c)) and compatible(B, R).
#include <gtest/gtest.h>

#include "axe/core/error.hpp"
#include "axe/cute/layout.hpp"
#include "random_layout.hpp"
#include "support/test_support.hpp"

namespace axe::cute {
namespace {

Layout L(std::string_view s) {
  return parse_layout(s);
}

// CuTe-style checker: the post-conditions of composition.
void test_composition(const Layout& a, const Layout& b) {
  Layout r = composition(a, b);
  ASSERT_TRUE(compatible(b.shape(), r.shape()))
      << to_string(a) << " o " << to_string(b) << " = " << to_string(r);
  for (std::int64_t i = 0; i < size(b); ++i) {
    ASSERT_EQ(r(i), a(b(i))) << to_string(a) << " o " << to_string(b) << " = " << to_string(r)
                             << " at " << i;
  }
}

TEST(Composition, Examples) {
  // The worked example of the CuTe docs.
  EXPECT_EQ(composition(L("(6,2):(8,2)"), L("(4,3):(3,1)")), L("((2,2),3):((24,2),8)"));
  EXPECT_EQ(composition(L("20:2"), L("(4,5):(1,4)")), L("(4,5):(2,8)"));
  EXPECT_EQ(composition(L("(10,2):(16,4)"), L("(5,4):(1,5)")), L("(5,(2,2)):(16,(80,4))"));
  // C++ also accepts a rest stride smaller than the current extent: every third of 8x8 row 0.
  EXPECT_EQ(composition(L("(8,8):(8,1)"), L("3:3")), L("3:24"));
  // Stride-0 rhs and integral lhs shortcuts.
  EXPECT_EQ(composition(L("(4,6):(1,4)"), L("5:0")), L("5:0"));
  EXPECT_EQ(composition(L("12:3"), L("(2,3):(1,2)")), L("(2,3):(3,6)"));
  // C++ keeps the extension stride of a trailing extent-1 mode (coalesce_x).
  EXPECT_EQ(composition(L("(4,3,1):(3,1,0)"), L("(24):(1)")), L("((4,3,2)):((3,1,0))"));
}

TEST(Composition, ByModeTilerDropsUntiledModes) {
  Layout a = L("(12,(4,8)):(59,(13,1))");
  EXPECT_EQ(composition(a, parse_tiler("<3:4,8:2>")), L("(3,(2,4)):(236,(26,1))"));
  EXPECT_EQ(composition(a, parse_tiler("<3,8>")), L("(3,(4,2)):(59,(13,1))"));
  EXPECT_EQ(composition(a, parse_tiler("<_,8:2>")), L("(12,(2,4)):(59,(26,1))"));
  EXPECT_EQ(composition(a, parse_tiler("<3:4>")), L("(3):(236)"));  // mode 1 dropped, as C++
  EXPECT_EQ(composition(a, Tiler::none()), a);
  EXPECT_THROW(composition(a, parse_tiler("<3,8,2>")), Error);
}

TEST(Composition, RejectsWhereCuTeStaticAssertsFail) {
  // Stride divisibility: stride 8 is neither a multiple of the extent 6 nor smaller than it.
  try {
    composition(L("(6,2):(1,7)"), L("2:8"));
    ADD_FAILURE() << "expected Stride Divisibility";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Stride Divisibility"), std::string::npos) << e.what();
  }
  // Shape divisibility: 8 elements of (6,2) cannot be taken contiguously.
  try {
    composition(L("(6,2):(8,2)"), L("8:1"));
    ADD_FAILURE() << "expected Shape Divisibility";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Shape Divisibility"), std::string::npos) << e.what();
  }
  EXPECT_THROW(composition(L("(0,4):(1,1)"), L("2:1")), Error);
}

TEST(Composition, OverflowIsAnError) {
  EXPECT_THROW(composition(L("4:4611686018427387904"), L("2:4")), Error);
}

// Property: for a random A and a random injective tile B of A's digits (disjoint runs of A's
// mixed-radix digits, permuted, nested, some broadcast), composition is exact function
// composition and compatible with B.
TEST(Composition, IsFunctionComposition) {
  auto rng = axe::test::make_rng(201);
  for (int t = 0; t < 4000; ++t) {
    Layout a = testing::random_layout(rng, testing::random_kind(rng), 3, 1024);
    Layout b = testing::digit_tile(rng, a);
    ASSERT_NO_FATAL_FAILURE(test_composition(a, b));
  }
}

// For arbitrary A and B, composition never crashes: it returns a layout of B's size or throws
// axe::Error naming a divisibility condition. (C++ CuTe only promises R == A o B for admissible
// B, so no value check here.)
TEST(Composition, ArbitraryOperandsReturnOrReject) {
  auto rng = axe::test::make_rng(203);
  int composed = 0;
  for (int t = 0; t < 4000; ++t) {
    Layout a = testing::random_layout(rng, testing::random_kind(rng), 3, 1024);
    Layout b = testing::random_layout(rng, testing::random_kind(rng), 2, 64);
    try {
      Layout r = composition(a, b);
      ++composed;
      ASSERT_EQ(size(r), size(b)) << to_string(a) << " o " << to_string(b);
    } catch (const Error& e) {
      ASSERT_NE(std::string(e.what()).find("Divisibility"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(composed, 500);
}

// Composition is associative where both sides exist: (A o B) o C == A o (B o C) as functions.
// (A o B may split B's digits differently from B, so C need not be admissible on both sides.)
TEST(Composition, IsAssociative) {
  auto rng = axe::test::make_rng(202);
  int checked = 0;
  for (int t = 0; t < 3000; ++t) {
    Layout a = testing::random_layout(rng, testing::random_kind(rng), 2, 512);
    Layout b = testing::digit_tile(rng, a, /*allow_broadcast=*/false);
    Layout c = testing::digit_tile(rng, b);
    Layout left;
    try {
      left = composition(composition(a, b), c);
    } catch (const Error&) {
      continue;
    }
    Layout right = composition(a, composition(b, c));
    ++checked;
    for (std::int64_t i = 0; i < size(c); ++i) {
      ASSERT_EQ(left(i), right(i)) << to_string(a) << " " << to_string(b) << " " << to_string(c);
    }
  }
  EXPECT_GT(checked, 1500);
}

}  // namespace
}  // namespace axe::cute
